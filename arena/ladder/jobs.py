"""What the Celery tasks do, as plain functions over the store (the tasks are thin shells)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.ladder import metrics
from arena.ladder.leases import RENEWER, Held, lease_seconds, runner_id
from arena.ladder.matchplay import play_match
from arena.ladder.model import Ladder, MatchInfo, now_ms
from arena.ladder.redis_matches import Finished
from arena.ladder.redis_store import RedisStore
from arena.play.relay import PLATFORM_FAULT
from arena.play.specs import SeatSpec
from arena.redis_client import REDIS_ERRORS

__all__ = ["BatchRun", "lease_seconds", "run_match", "run_matches", "spoiled_by_platform", "update_ratings"]

# A batch stores its played matches once it spent FLUSH_S of CPU time playing since it last stored
# (CPU, not wall time: on a busy machine a light game takes many times its CPU time, and storing
# after each one would undo the batch), or once FLUSH_WALL_S went by (paced bots mostly sleep).
FLUSH_S = 0.05
FLUSH_WALL_S = 0.25
# A batch gives back the matches it has not begun once it has played this long (long games: the
# worker's other children, idle meanwhile, take them): 'deferred', their leases released.
HAND_BACK_S = 1.0


_LADDERS: dict[tuple[int, str], tuple[float, Ladder]] = {}
LADDER_CACHE_S = 5.0  # the host may update a ladder: a definition is read again after this long


def _ladder(store: RedisStore, name: str) -> Ladder:
    """A ladder's definition, read at most once per LADDER_CACHE_S per process."""
    key = (id(store), name)
    cached = _LADDERS.get(key)
    if cached is None or time.monotonic() - cached[0] > LADDER_CACHE_S:
        cached = _LADDERS[key] = (time.monotonic(), store.get_ladder(name))
    return cached[1]


@dataclass
class BatchRun:
    """What ``run_matches`` did with each match: ``outcomes`` (see ``run_match``; 'error' for a match
    whose play raised, its exception in ``errors``; 'deferred' for one given back unplayed: both
    with their lease given up, so they can be run again now)."""

    outcomes: dict[str, str] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)


def run_match(
    store: RedisStore,
    match_id: str,
    rate: Callable[[str], None],
    lease_s: float | None = None,
    archive: Callable[[], None] | None = None,
) -> str:
    """Play ``match_id`` unless it is finished or held by a live runner; rate it, then ask for it to be
    archived (``archive``, off the match path). Returns what happened: 'finished', 'duplicate'
    (someone finished it first), 'voided' (spoiled by the platform: failed, not logged, not rated),
    'busy', 'failed' or 'missing' (unknown, or archived and forgotten). Raises what its play raised."""
    run = run_matches(store, [match_id], rate, lease_s, archive, flush_s=0.0)
    if match_id in run.errors:
        raise run.errors[match_id]
    return run.outcomes[match_id]


def run_matches(
    store: RedisStore,
    match_ids: Sequence[str],
    rate: Callable[[str], None],
    lease_s: float | None = None,
    archive: Callable[[], None] | None = None,
    flush_s: float = FLUSH_S,
    hand_back_s: float = HAND_BACK_S,
) -> BatchRun:
    """Run a batch of matches claimed together: start (and lease) all of them in one script, play
    those not finished or held elsewhere one after another, and store the played ones in one finish
    script per ``flush_s`` of CPU time played (or FLUSH_WALL_S, and at the end), each logged once;
    then rate and ask for the archive. After ``hand_back_s`` the matches not begun are given back
    ('deferred': the caller sends them again). A crash loses nothing stored; a match played but not stored
    yet is played again (same seed, same deal) by whoever runs it next: the redelivered task, or the
    sweep once its lease lapses."""
    lease = lease_s or lease_seconds()
    runner = runner_id()
    run = BatchRun()
    to_play: list[MatchInfo] = []
    redelivered: set[str] = set()  # ladders of matches found finished: make sure their ratings caught up
    for match_id, (status, info) in zip(match_ids, store.start_matches(match_ids, runner, lease), strict=True):
        if info is None:
            metrics.MATCH_RUNS_SKIPPED.labels(status).inc()
            run.outcomes[match_id] = status
            if status == "finished":
                redelivered.add(match_id.rpartition("-")[0])
        else:
            to_play.append(info)
    if to_play:
        metrics.MATCH_BATCH_SIZE.observe(len(to_play))
    pending: list[tuple[Finished, float]] = []  # played, not stored yet; with how long each play took (s)
    with RENEWER.holding(store, [info.match_id for info in to_play], runner, lease) as held:
        cpu, wall = time.thread_time(), time.perf_counter()
        began = wall
        for index, info in enumerate(to_play):
            if index and time.perf_counter() - began >= hand_back_s:
                for rest in to_play[index:]:
                    store.release_match(rest.match_id, runner)
                    held.drop(rest.match_id)
                    run.outcomes[rest.match_id] = "deferred"
                break
            played = _play(store, info, runner, held, run)
            if played is not None:
                pending.append(played)
            if pending and (time.thread_time() - cpu >= flush_s or time.perf_counter() - wall >= FLUSH_WALL_S):
                _flush(store, pending, held, run, rate, archive)
                pending, cpu, wall = [], time.thread_time(), time.perf_counter()
        if pending:
            _flush(store, pending, held, run, rate, archive)
    for ladder in redelivered:
        rate(ladder)
    if redelivered and archive is not None:
        archive()
    return run


def _play(store: RedisStore, info: MatchInfo, runner: str, held: Held, run: BatchRun) -> tuple[Finished, float] | None:
    """Play one started match to its record (None: voided or raised; ``run`` says which)."""
    metrics.MATCHES_STARTED.labels(info.ladder).inc()
    started, started_ms = time.perf_counter(), now_ms()
    try:
        ladder = _ladder(store, info.ladder)
        with metrics.MATCHES_RUNNING.labels(info.ladder).track_inprogress():
            seed = info.seed or store.ensure_seed(info.match_id)
            record = play_match(info.match_id, ladder.rules(), info.seats, seed, ladder.think_ms)
    except REDIS_ERRORS:
        raise  # the task retries the batch; what is not stored yet is played again
    except Exception as error:
        store.release_match(info.match_id, runner)
        held.drop(info.match_id)
        run.outcomes[info.match_id], run.errors[info.match_id] = "error", error
        return None
    spoiled = spoiled_by_platform(record, info.seats)
    if spoiled:  # the agents did nothing wrong: the match is voided, never rated as their loss
        store.fail_match(info.match_id, f"voided: {spoiled}")
        held.drop(info.match_id)
        metrics.MATCH_RUNS_SKIPPED.labels("voided").inc()
        run.outcomes[info.match_id] = "voided"
        return None
    return Finished(info, record, started_ms), time.perf_counter() - started


def _flush(
    store: RedisStore,
    pending: list[tuple[Finished, float]],
    held: Held,
    run: BatchRun,
    rate: Callable[[str], None],
    archive: Callable[[], None] | None,
) -> None:
    """Store played matches in one script (each logged once), then rate their ladders and ask for the archive."""
    stored = store.finish_matches([done for done, _ in pending])
    for (done, seconds), (outcome, _) in zip(pending, stored, strict=True):
        info = done.info
        held.drop(info.match_id)
        if outcome == "first":
            metrics.MATCHES_FINISHED.labels(info.ladder).inc()
            metrics.MATCH_DURATION.labels(info.ladder).observe(seconds)
            for fault in done.record.get("faults", ()):
                metrics.MATCH_FAULTS.labels(info.ladder, str(fault.get("kind", "unknown")).lower()).inc()
        else:  # finished by another runner first ('missing': and archived meanwhile)
            metrics.MATCH_RUNS_SKIPPED.labels("duplicate").inc()
        run.outcomes[info.match_id] = "finished" if outcome == "first" else "duplicate"
    for ladder in dict.fromkeys(done.info.ladder for done, _ in pending):
        rate(ladder)
    if archive is not None:
        archive()


def spoiled_by_platform(record: dict[str, Any], seats: list[SeatSpec]) -> str:
    """Why the platform, not the agents, spoiled this match ('' if it did not): a relay failure
    (Redis) reached the match host, or every remote seat (two or more) was forfeited for being
    disconnected, which is what a lost Redis or gateway looks like from the host."""
    faults = record.get("faults", [])
    if any(str(fault.get("detail", "")).startswith(PLATFORM_FAULT) for fault in faults):
        return "the platform lost Redis during the match"
    remote = [seat for seat, spec in enumerate(seats) if spec.kind != "builtin"]
    forfeited = set(record.get("forfeited", []))
    kinds = {seat: {f["kind"] for f in faults if f["seat"] == seat} for seat in remote}
    if len(remote) >= 2 and all(seat in forfeited and kinds[seat] == {"DISCONNECTED"} for seat in remote):
        return "every remote seat was forfeited as disconnected"
    return ""


def update_ratings(store: RedisStore, ladder: str) -> int:
    applied = store.catch_up_ratings(ladder)
    if applied:
        metrics.RATING_UPDATES.labels(ladder).inc(applied)
    return applied
