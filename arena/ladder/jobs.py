"""What the Celery tasks do, as plain functions over the store (the tasks are thin shells)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.clock import now_ms
from arena.ladder import metrics
from arena.ladder.leases import RENEWER, Held, runner_id
from arena.ladder.loop import form_once
from arena.ladder.matchplay import play_match
from arena.ladder.model import Ladder, MatchInfo
from arena.ladder.redis_matches import Finished
from arena.ladder.redis_store import RedisStore
from arena.ladder.settings import backlog_max, lease_seconds
from arena.ladder.store import NotFound
from arena.play.relay import platform_faults
from arena.play.specs import all_builtin
from arena.redis_client import REDIS_ERRORS
from ohell.rules import Rules

__all__ = [
    "BatchRun",
    "form_next",
    "lease_seconds",
    "run_match",
    "run_matches",
    "spoiled_by_platform",
    "update_ratings",
]

# A batch stores its played matches once it spent FLUSH_S of CPU time playing since it last stored
# (CPU, not wall time: on a busy machine a light game takes many times its CPU time, and storing
# after each one would undo the batch), or once FLUSH_WALL_S went by (paced bots mostly sleep).
FLUSH_S = 0.05
FLUSH_WALL_S = 0.25
# A batch gives back the matches it has not begun once it has played this long (long games: the
# worker's other children, idle meanwhile, take them): 'deferred', their leases released.
HAND_BACK_S = 1.0
# A batch task that is given ``form_next`` goes on for this long: once a batch is stored it forms the
# next tables of the agents it freed and, when no other task waits for the workers, plays the first
# batch of them itself, with no Celery task or matchmaker round in between (docs/operations.md,
# "Batches of built-in matches"; docs/benchmarks.md, Ladder: the light mix). A task waiting for the
# workers stops it at the end of the batch in play, so this bounds only how long a worker keeps one
# task (2 s spent ~0.15 ms less CPU per light match than 0.5 s: fewer batches through Celery).
CONTINUE_S = 2.0

# form_next's dispatch: (match ids, celery queue) of the tables it does not keep
Dispatch = Callable[[Sequence[str], str], None]


_LADDERS: dict[tuple[int, str], tuple[float, Ladder]] = {}
LADDER_CACHE_S = 5.0  # the host may update a ladder: a definition is read again after this long


def _ladder(store: RedisStore, name: str) -> Ladder:
    """A ladder's definition, read at most once per LADDER_CACHE_S per process."""
    key = (id(store), name)
    cached = _LADDERS.get(key)
    if cached is None or time.monotonic() - cached[0] > LADDER_CACHE_S:
        cached = _LADDERS[key] = (time.monotonic(), store.get_ladder(name))
    return cached[1]


@functools.lru_cache(maxsize=64)
def _rules(rules_json: str) -> Rules:
    return Rules.from_dict(json.loads(rules_json))


def played_with(store: RedisStore, info: MatchInfo) -> tuple[Rules, int] | str:
    """The rules and think time ``info`` is played with: those stored with its claim. A match claimed
    before they were stored there takes its ladder's; if that no longer seats its table, why it
    cannot be played (a sentence)."""
    if info.rules_json:
        return _rules(info.rules_json), info.think_ms
    try:
        ladder = _ladder(store, info.ladder)
    except NotFound:
        return "its ladder was deleted"
    if ladder.seats != len(info.seats):
        return f"its ladder has {ladder.seats} seats now, its table {len(info.seats)}"
    return ladder.rules(), ladder.think_ms


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
    form_next: Callable[[set[str]], list[str]] | None = None,
    continue_s: float = CONTINUE_S,
) -> BatchRun:
    """Run a batch of matches claimed together: start (and lease) all of them in one script, play
    those not finished or held elsewhere one after another, and store the played ones in one finish
    script per ``flush_s`` of CPU time played (or FLUSH_WALL_S, and at the end), each logged once;
    then rate and ask for the archive. After ``hand_back_s`` the matches not begun are given back
    ('deferred': the caller sends them again). A crash loses nothing stored; a match played but not stored
    yet is played again (same seed, same deal) by whoever runs it next: the redelivered task, or the
    sweep once its lease lapses.

    With ``form_next`` (ladders -> ids of new all-built-in matches claimed for this runner), for
    ``continue_s``: once a batch is stored, the tables of the agents it freed are formed here and the
    batch kept goes the same way (their outcomes join the run's). Those matches were claimed by this
    runner alone; if it dies their leases lapse and the sweep sends each one again."""
    run = BatchRun()
    began = time.perf_counter()
    batch = list(match_ids)
    while batch:
        following = None
        if form_next is not None and time.perf_counter() - began < continue_s:
            ladders = {match_id.rpartition("-")[0] for match_id in batch}
            following = functools.partial(form_next, ladders)
        batch = _run_batch(
            store, batch, rate, lease_s or lease_seconds(), archive, flush_s, hand_back_s, run, following
        )
    return run


def form_next(store: RedisStore, ladders: set[str], batch: int, dispatch: Dispatch) -> list[str]:
    """One forming round on ``ladders`` (those not paused, while the archive's backlog is not full), as
    the matchmaker's loop does it. When no task waits in the broker's built-in queue, returns the
    first batch of all-built-in matches formed (for the caller to run now); every other match formed
    goes to ``dispatch``. When tasks wait there, every match formed goes to ``dispatch`` (behind them:
    a worker whose games end quickly does not jump the queue) and this returns []."""
    backlog, defined = store.forming_state()
    if backlog >= backlog_max():
        return []
    kept: list[str] = []
    keep = not store.builtin_tasks_waiting()

    def keep_first(match_ids: Sequence[str], queue: str) -> None:
        if keep and not kept and queue == store.queues.builtin:
            kept.extend(match_ids)
        else:
            dispatch(match_ids, queue)

    for ladder, queued in defined:
        if ladder.name in ladders and queued and not ladder.paused:
            form_once(store, ladder, keep_first, batch)
    return kept


def _run_batch(
    store: RedisStore,
    match_ids: Sequence[str],
    rate: Callable[[str], None],
    lease: float,
    archive: Callable[[], None] | None,
    flush_s: float,
    hand_back_s: float,
    run: BatchRun,
    form_next: Callable[[], list[str]] | None,
) -> list[str]:
    """One batch of ``run_matches``. With ``form_next``, the batch's last store does not wake the
    forming loop: ``form_next`` forms the freed agents' next tables right after it, before the rating
    (so that the loop's tick seldom forms them first); returns the batch it kept ([] without)."""
    runner = runner_id()
    following: list[str] | None = None

    def form_following() -> None:
        nonlocal following
        following = form_next() if form_next is not None else []

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
            last = index == len(to_play) - 1
            if pending and (last or time.thread_time() - cpu >= flush_s or time.perf_counter() - wall >= FLUSH_WALL_S):
                _flush(store, pending, held, run, rate, archive, form_following if last and form_next else None)
                pending, cpu, wall = [], time.thread_time(), time.perf_counter()
        if pending:  # given back: no next batch here
            _flush(store, pending, held, run, rate, archive, None)
    for ladder in redelivered:
        rate(ladder)
    if redelivered and archive is not None:
        archive()
    if following is None and form_next is not None and "deferred" not in run.outcomes.values():
        form_following()  # the batch's last match stored nothing (voided, raised) or none was played
    return following or []


def _play(store: RedisStore, info: MatchInfo, runner: str, held: Held, run: BatchRun) -> tuple[Finished, float] | None:
    """Play one started match to its record (None: voided or raised; ``run`` says which)."""
    metrics.MATCHES_STARTED.labels(info.ladder).inc()
    started, started_ms = time.perf_counter(), now_ms()
    spoiled = deal_seen(info)
    setting = spoiled or played_with(store, info)
    if isinstance(setting, str):
        spoiled = setting
    else:
        rules, think_ms = setting
        try:
            with metrics.MATCHES_RUNNING.labels(info.ladder).track_inprogress():
                seed = info.seed or store.ensure_seed(info.match_id)
                record = play_match(info.match_id, rules, info.seats, seed, think_ms)
        except REDIS_ERRORS:
            raise  # the task retries the batch; what is not stored yet is played again
        except Exception as error:
            store.release_match(info.match_id, runner)
            held.drop(info.match_id)
            run.outcomes[info.match_id], run.errors[info.match_id] = "error", error
            return None
        spoiled = spoiled_by_platform(record)
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
    between: Callable[[], None] | None = None,
) -> None:
    """Store played matches in one script (each logged once), then rate their ladders and ask for the
    archive; ``between`` (forming the next tables) runs after the store, before the rating, and the store
    then does not wake the forming loop."""
    stored = store.finish_matches([done for done, _ in pending], wake=between is None)
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
    if between is not None:
        between()
    for ladder in dict.fromkeys(done.info.ladder for done, _ in pending):
        rate(ladder)
    if archive is not None:
        archive()


def deal_seen(info: MatchInfo) -> str:
    """Why a match must not be played again ('' if it may): an earlier attempt of a match with
    agents (its runner died mid-match, or its play raised) may have shown them the deal, which the
    same seed deals again (built-in bots learn nothing from an attempt: their matches are replayed)."""
    if info.attempts > 1 and not all_builtin(info.seats):
        return f"attempt {info.attempts}: its agents may have seen its deal in an earlier attempt"
    return ""


def spoiled_by_platform(record: dict[str, Any]) -> str:
    """Why the platform, not the agents, spoiled this match ('' if it did not): a fault of its own
    (its Redis failed, or the gateway holding an agent died or shut down) reached the match host.
    An agent that went away is the agent's fault, however many of the seats did: two agents of one
    author leaving a match they were losing must not void it."""
    ours = platform_faults(record)
    if not ours:
        return ""
    # fixed words: a Redis error's own text may name its address, and the match's error is public
    if any("Redis failed" in detail for detail in ours):
        return "the platform lost Redis during the match"
    return "the gateway holding a seat's agent went away (shut down or died) during the match"


def update_ratings(store: RedisStore, ladder: str) -> int:
    applied = store.catch_up_ratings(ladder)
    if applied:
        metrics.RATING_UPDATES.labels(ladder).inc(applied)
    return applied
