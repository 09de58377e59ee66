"""``MatchStore``: the ``RedisStore`` part over a match's life: started and leased, finished
(record stored, match logged) or failed, and the reads of matches in play or not yet archived."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from arena.clock import now_ms
from arena.keys import text
from arena.ladder.matchlog import encode, summarize
from arena.ladder.model import MatchInfo
from arena.ladder.redis_base import StoreBase, parse_match
from arena.ladder.store import NotFound
from arena.record_codec import pack_record, unpack_record, unpack_record_json
from arena.redispatch import FIELDS, Sent

RECENT_SCAN = 1000  # list_matches looks at this many of the newest unarchived matches at most
SCAN_BATCH = 100  # ... reading their hashes this many at a time


@dataclass(frozen=True)
class Finished:
    """A match played to its record, for ``finish_matches``; ``started_ms`` is when its play
    began (0: keep the time the start script wrote, which for a batch is when the batch began)."""

    info: MatchInfo
    record: dict[str, Any]
    started_ms: int = 0


class MatchStore(StoreBase):
    """Matches: start, lease, finish, fail; records; the matches in play and the recent ones."""

    def start_match(self, match_id: str, runner: str, lease_s: float) -> str:
        """'run' (the caller holds the lease now), 'busy' (another live runner holds it),
        'finished', 'failed' or 'missing'."""
        return self.start_match_info(match_id, runner, lease_s)[0]

    def start_match_info(self, match_id: str, runner: str, lease_s: float) -> tuple[str, MatchInfo | None]:
        """``start_match``, with the match as stored once started when the status is 'run'."""
        return self.start_matches([match_id], runner, lease_s)[0]

    def start_matches(
        self, match_ids: Sequence[str], runner: str, lease_s: float
    ) -> list[tuple[str, MatchInfo | None]]:
        """Start several matches for one runner in one script: (status, match as stored when the
        status is 'run') per match, in order. Each match started is leased to ``runner`` at once."""
        args: list[str | int] = [self.keys.prefix, runner, int(lease_s * 1000), now_ms(), *match_ids]
        started: list[tuple[str, MatchInfo | None]] = []
        for reply in self._start(args=args):
            status = text(reply[0])
            flat = reply[1] if status == "run" else None
            started.append((status, parse_match(dict(zip(flat[::2], flat[1::2], strict=True))) if flat else None))
        return started

    def renew_match(self, match_id: str, runner: str, lease_s: float) -> bool:
        keys = [self.keys.match_lease(match_id)]
        return bool(self._renew(keys=keys, args=[runner, int(lease_s * 1000)]))

    def release_match(self, match_id: str, runner: str) -> None:
        """Give up ``runner``'s lease on an unfinished match, so another runner may start it now."""
        self._release_if_held(keys=[self.keys.match_lease(match_id)], args=[runner])

    def finish_match(self, match_id: str, record: dict[str, Any], info: MatchInfo | None = None) -> tuple[bool, str]:
        """Store the record and log the match once; returns (this call was the first, log id)."""
        ((outcome, log_id),) = self.finish_matches([Finished(info or self.get_match(match_id), record)])
        if outcome == "missing":
            raise NotFound(f"no match {match_id!r}", "match_id")
        return outcome == "first", log_id

    def finish_matches(self, finished: Sequence[Finished], wake: bool = True) -> list[tuple[str, str]]:
        """Store the records and log the matches, each once, in one script: (outcome, log id) per
        match, outcome 'first' (this call logged it), 'duplicate', 'failed' or 'missing'. ``wake=False``:
        the enrolled agents go back in their queue without waking the forming loop (the caller forms
        their next tables itself; the loop's tick takes any it leaves)."""
        args: list[str | int | bytes] = [self.keys.prefix, now_ms(), int(wake)]
        for done in finished:
            info = done.info
            summary = summarize(done.record, info.ladder, [seat.agent_id for seat in info.seats])
            blob, raw_bytes = pack_record(done.record)
            args += [info.match_id, blob, encode(summary), raw_bytes, done.started_ms or ""]
        return [(text(outcome), text(log_id)) for outcome, log_id in self._finish(args=args)] if finished else []

    def fail_match(self, match_id: str, error: str) -> bool:
        return bool(self._fail(args=[self.keys.prefix, match_id, error[:500], now_ms()]))

    def ensure_seed(self, match_id: str) -> int:
        """The match's secret seed; one is drawn now for a match claimed before seeds were stored."""
        self.client.hsetnx(self.keys.match(match_id), "seed", secrets.randbits(63))
        return int(self.client.hget(self.keys.match(match_id), "seed") or 0)

    def mark_dispatched(self, match_id: str, attempts: int = 0, unstarted: int = 0) -> None:
        """The match's task was sent now, after ``attempts`` runs of it had started and ``unstarted``
        copies had been sent since the last start."""
        self.client.hset(
            self.keys.match(match_id),
            mapping={"dispatched_ms": str(now_ms()), "dispatched_after": str(attempts), "unstarted": str(unstarted)},
        )

    def dispatched(self, match_id: str) -> Sent:
        """The match's last task sent."""
        return Sent.parse(self.client.hmget(self.keys.match(match_id), FIELDS))

    def lease_alive(self, match_id: str) -> bool:
        return bool(self.client.exists(self.keys.match_lease(match_id)))

    def get_record(self, match_id: str) -> dict[str, Any]:
        return unpack_record(self._record_blob(match_id))

    def get_record_json(self, match_id: str) -> str:
        """``get_record`` as the JSON text stored."""
        return unpack_record_json(self._record_blob(match_id))

    def _record_blob(self, match_id: str) -> bytes:
        raw = self.client.get(self.keys.record(match_id))
        if raw is None:
            self.get_match(match_id)  # NotFound for an unknown id
            raise NotFound(f"match {match_id!r} has no record yet (not finished)", "match_id")
        return cast(bytes, raw)

    def list_matches(self, ladder: str, agent_id: str, offset: int, limit: int) -> list[MatchInfo]:
        """Finished matches the archive does not hold yet, newest first, among the newest RECENT_SCAN of
        them: of a ladder and/or an agent (the archive answers for the others: ``arena.archive.queries``)."""
        newest = cast(list[bytes], self.client.zrevrange(self.keys.unarchived, 0, RECENT_SCAN - 1))
        ids = [match_id for match_id in map(text, newest) if not ladder or match_id.rpartition("-")[0] == ladder]
        found: list[MatchInfo] = []
        for start in range(0, len(ids), SCAN_BATCH):  # a pipeline per batch: one round trip, not one per match
            with self.client.pipeline(transaction=False) as pipe:
                for match_id in ids[start : start + SCAN_BATCH]:
                    pipe.hgetall(self.keys.match(match_id))
                hashes = pipe.execute()
            for raw in hashes:
                if not raw:  # archived meanwhile
                    continue
                info = parse_match(raw)
                if not agent_id or any(seat.agent_id == agent_id for seat in info.seats):
                    found.append(info)
                if len(found) >= offset + limit:
                    return found[offset:]
        return found[offset:]

    def running_matches(self, ladder: str, agent_id: str) -> list[MatchInfo]:
        """Matches in play now (of one ladder and/or agent when given), by id: two round trips
        (their ids, then every hash in one pipeline) however many there are. Of one ladder, only its
        own are read: a ladder match's id is "<ladder>-<n>", and a ladder's name has no '-'."""
        match_ids = [m for m in self.active_matches() if not ladder or m.rpartition("-")[0] == ladder]
        with self.client.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hgetall(self.keys.match(match_id))
            hashes = pipe.execute()
        matches = []
        for raw in hashes:
            info = parse_match(raw) if raw else None
            if info is None or info.state not in ("queued", "running") or (ladder and info.ladder != ladder):
                continue
            if not agent_id or agent_id in (seat.agent_id for seat in info.seats):
                matches.append(info)
        return matches
