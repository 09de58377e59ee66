"""Moving finished matches from Redis to the SQL archive (``arena.archive``), exactly once.

FINISH puts a match in the backlog (``unarchived``); rating it stores each seat's rating before and
after in its hash. ``archive_pending`` drains the backlog oldest first, in batches: it reads the
rated matches, writes them to SQL in one transaction (the match id is the key: a match archived
already is skipped), and only then deletes their record and hash from Redis. A crash anywhere
leaves them in the backlog, and the next run writes nothing twice. Unrated matches wait.

A match whose id the archive holds for another match (Redis lost its match counter, which handed
the id out again) is refused by the archive and set aside in Redis (``archive-refused``, its hash and
record kept), logged as an error; the counter is
then raised past the archive's ids (``raise_match_seq``, also run when the matchmaker starts), so
the next matches get fresh ids. docs/operations.md says what the host does with a refused match.

This is the one module of the ladder that imports the archive (the archive imports nothing of the
ladder): the ladder sits on the archive, as on the engine.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from arena.archive.queries import highest_match_number
from arena.archive.writer import FinishedMatch, SeatResult, write
from arena.clock import now_ms
from arena.ladder import metrics
from arena.ladder.redis_archive import ArchiveItem
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import NotFound
from arena.record_codec import unpack_record

BATCH = 200
LOCK_S = 60.0  # the drain lock lapses this long after its holder's last batch (a dead holder)

log = logging.getLogger(__name__)


@dataclass
class Drained:
    archived: int = 0  # written by this call
    already: int = 0  # found in the archive (an earlier run wrote them, then stopped)
    waiting: int = 0  # not rated yet: left for a later run
    conflicts: int = 0  # refused: the archive holds another match under the id (set aside in Redis)
    busy: bool = False  # another run holds the lock


def finished_match(item: ArchiveItem, rules: dict[str, Any]) -> FinishedMatch:
    """What the archive keeps of a rated match, from its hash and record as Redis holds them. The
    results come from the log summary kept in the hash: the record is copied, never parsed."""
    info = item.info
    summary = json.loads(item.summary)
    ratings = json.loads(item.rating)
    seats = [
        SeatResult(
            agent_id=seat.agent_id,
            agent_name=seat.name,
            agent_version=seat.version,
            kind=seat.kind,
            points=summary["totals"][i],
            hands=summary["hands"][i],
            bids_made=summary["exact"][i],
            faults=summary["faults"][i],
            winner=i in summary["winners"],
            forfeited=i in summary["forfeited"],
            rating=tuple(ratings[i]),
        )
        for i, seat in enumerate(info.seats)
    ]
    return FinishedMatch(
        info.match_id,
        info.ladder,
        info.log_id,
        info.created_ms,
        info.started_ms,
        info.finished_ms,
        info.attempts,
        item.record,
        item.record_bytes,
        rules,
        max(summary["hands"], default=0),
        seats,
    )


def ladder_rules(store: RedisStore, item: ArchiveItem, known: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The rules the match was played by: those stored with its claim; for a match claimed before
    they were stored there, its ladder's (kept in ``known``), or, for a ladder deleted since the match
    finished, those in its record (parsed only then: the record is otherwise copied)."""
    if item.info.rules_json:
        return dict(json.loads(item.info.rules_json))
    ladder = item.info.ladder
    if ladder not in known:
        try:
            known[ladder] = store.get_ladder(ladder).rules().to_dict()
        except NotFound:
            return dict(unpack_record(item.record)["rules"])
    return known[ladder]


def archive_batch(store: RedisStore, engine: Engine, match_ids: list[str]) -> Drained:
    """Archive the rated ones of ``match_ids``, then forget them in Redis."""
    done = Drained()
    batch, gone = [], []
    rules: dict[str, dict[str, Any]] = {}
    for match_id, item in zip(match_ids, store.for_archive(match_ids), strict=True):
        if item is None:
            gone.append(match_id)  # forgotten already (or never finished): nothing left to archive
        elif not item.rating:
            done.waiting += 1
        else:
            batch.append(finished_match(item, ladder_rules(store, item, rules)))
    written = write(engine, batch)
    inserted, refused = set(written.inserted), set(written.conflicts)
    done.archived, done.conflicts = len(inserted), len(refused)
    done.already = len(batch) - len(inserted) - len(refused)
    store.forget_archived([match.match_id for match in batch if match.match_id not in refused] + gone)
    if refused:
        store.set_aside_refused(sorted(refused), now_ms())
        counter = raise_match_seq(store, engine)
        metrics.ARCHIVE_ERRORS.labels("id_taken").inc(len(refused))
        log.error(
            "the archive holds other matches under the ids %s: these matches stay in Redis, unarchived"
            " (set aside in %s; Redis lost its match counter); the counter is now %d, so new matches get"
            " fresh ids",
            ", ".join(sorted(refused)),
            store.keys.archive_refused,
            counter,
        )
    for match in batch:
        if match.match_id in inserted:
            metrics.MATCHES_ARCHIVED.labels(match.ladder).inc()
    return done


def raise_match_seq(store: RedisStore, engine: Engine) -> int:
    """Raise the match counter to the archive's highest match number (never lower it); returns the
    counter. The matchmaker runs it when it starts: a counter Redis lost would hand out archived ids."""
    return store.raise_match_seq(highest_match_number(engine))


def archive_pending(
    store: RedisStore, engine: Engine | Callable[[], Engine], batch: int = BATCH, max_batches: int = 1000
) -> Drained:
    """Drain the backlog (one drainer at a time: another call meanwhile returns ``busy``).
    ``engine`` may be a function, called only when there is work (it may raise while the
    database is down)."""
    holder = uuid.uuid4().hex
    total = Drained()
    if not store.hold("archive_lock", holder, LOCK_S):
        total.busy = True
        return total
    try:
        skip = 0
        for _ in range(max_batches):
            ids = store.unarchived(skip + batch)[skip:]
            if not ids:
                break
            sql = engine() if callable(engine) else engine
            done = archive_batch(store, sql, ids)
            total.archived += done.archived
            total.already += done.already
            total.conflicts += done.conflicts
            skip += done.waiting  # unrated matches stay at the front: look past them
            total.waiting += done.waiting
            store.hold("archive_lock", holder, LOCK_S)
            if done.waiting == len(ids):
                break
    finally:
        store.release("archive_lock", holder)
    metrics.ARCHIVE_BACKLOG.set(store.archive_backlog())
    return total
