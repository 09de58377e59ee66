"""Rated matches per second through the whole ladder stack (matchmaker process, Celery worker
processes, Redis) with built-in bots, against the same games played in-process on as many
processes as the worker has children. Rounds alternate: the stack plays a window of matches,
drains (agents leave, matches finish and are rated), then the reference plays that window's
games (same match ids: same deals and seats) while the stack idles. The median round counts.
Each round also prints CPU milliseconds per match of every stack process and of the reference.
Last line:

    ladder: stack=<matches/s> inprocess=<matches/s> ratio=<stack/inprocess>

Usage: python bench/ladder.py [--mix demo|light] [--rounds 3] [--matches N] [--concurrency 2]

--mix demo (default): the demo ladder's bots (random, heuristic, strong) and rules (classic with
hands of 5, 4, 3, 2, 1 cards); --mix light: heuristic and random bots on full classic games,
which cost ~5.5 ms each, so the stack's own cost per match (the record stored, the rating, the
archive; Celery, Redis and forming per batch of matches: OHELL_MATCH_BATCH) weighs most there.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import Engine

from arena.archive import queries
from arena.archive.db import connect
from arena.keys import stream_entries, text
from arena.ladder.matchplay import play_builtin
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import NotFound
from arena.local.demo import DEMO_OPTIONS, demo_agents
from arena.local.stack import Stack, StackConfig
from arena.play.specs import SeatSpec
from ohell.presets import preset, preset_with_options
from ohell.rules import Rules


def stream_id(value: bytes | str | None) -> tuple[int, int]:
    if not value:
        return (0, 0)
    text = value.decode() if isinstance(value, bytes) else value
    ms, _, seq = text.partition("-")
    return int(ms), int(seq)


def wait_for(condition: Any, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the ladder stopped making progress")
        time.sleep(0.01)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc; 0 for those gone)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def stack_roles(stack: Stack) -> dict[str, list[int]]:
    """Process ids of the stack by role: redis-server, matchmaker, Celery main, pool children."""
    worker = stack.workers[0].popen.pid
    return {
        "redis": [stack.redis.process.pid] if stack.redis and stack.redis.process else [],
        "matchmaker": [proc.popen.pid for proc in stack.procs if proc.name == "matchmaker"],
        "celery-main": [worker],
        "children": children(worker),
    }


Sampler = Callable[[], dict[str, float]]


def measure_stack(
    store: RedisStore, ladder: str, warmup: int, matches: int, sample: Sampler
) -> tuple[float, list[str], dict[str, float]]:
    """Matches rated per second over ``matches`` logged matches after ``warmup``, the window's
    match ids and the CPU milliseconds per match of each kind of stack process."""
    log = store.keys.log(ladder)
    wait_for(lambda: store.client.xlen(log) >= warmup)
    start_count, started, cpu_before = store.client.xlen(log), time.perf_counter(), sample()
    wait_for(lambda: store.client.xlen(log) >= start_count + matches)
    entries = stream_entries(store.client.xrange(log, count=start_count + matches))
    target = stream_id(entries[-1][0])
    wait_for(lambda: stream_id(store.client.get(store.keys.rated(ladder))) >= target)
    seconds, cpu_after = time.perf_counter() - started, sample()
    window = [text(fields[b"match"]) for _, fields in entries[start_count:]]
    cpu_ms = {role: 1000 * (cpu_after[role] - cpu_before[role]) / matches for role in cpu_after}
    return matches / seconds, window, cpu_ms


def play(job: tuple[str, Any, list[dict[str, Any]], int]) -> int:
    record = play_builtin(*job)
    return len(record["hands"])


def measure_inprocess(jobs: list[tuple[str, Any, list[dict[str, Any]], int]], processes: int) -> tuple[float, float]:
    """Matches per second and CPU milliseconds per match of ``processes`` pool processes."""
    with Pool(processes) as pool:
        pool.map(play, jobs[:processes])  # start-up and imports are not part of the games
        pids = [process.pid for process in pool._pool]  # type: ignore[attr-defined]
        started, cpu_before = time.perf_counter(), cpu_seconds(pids)
        pool.map(play, jobs, chunksize=1)
        seconds, cpu = time.perf_counter() - started, cpu_seconds(pids) - cpu_before
        return len(jobs) / seconds, 1000 * cpu / len(jobs)


def mix(name: str) -> tuple[Rules, list[str]]:
    """(rules, bots of the ladder's agents) of a benchmark mix."""
    if name == "light":
        return preset("classic"), ["heuristic", "random"] * 24
    rules = preset_with_options("classic", DEMO_OPTIONS)
    return rules, [bot for _, bot in demo_agents()] * 6


def enroll(store: RedisStore, agents: list[str]) -> None:
    for agent in agents:
        store.join("bench", agent, None, enroll=True)


def seats_and_seed(store: RedisStore, archive: Engine, match_id: str) -> tuple[list[SeatSpec], int]:
    """The seats and the (now public) deal seed of a finished match: from Redis while hot, else from
    the archive (the specs a table is claimed with are the agents' own)."""
    try:
        info = store.get_match(match_id)
        return info.seats, info.seed
    except NotFound:
        archived = queries.get_match(archive, match_id)
        record = queries.get_record(archive, match_id)
        assert archived is not None and record is not None, match_id
        return [store.get_agent(seat.agent_id).seat_spec() for seat in archived.seats], int(record["seed"])


def drain(store: RedisStore, agents: list[str]) -> None:
    """Take every agent out of the queue and wait until the stack is idle (matches finished, rated)."""
    for agent in agents:
        store.leave("bench", agent)
    wait_for(lambda: not store.active_matches())
    log = store.client.xrevrange(store.keys.log("bench"), count=1)
    wait_for(lambda: stream_id(store.client.get(store.keys.rated("bench"))) >= stream_id(log[0][0] if log else None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", choices=("demo", "light"), default="demo")
    parser.add_argument("--matches", type=int, help="measured matches per round (default: demo 60, light 200)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    matches = args.matches or (60 if args.mix == "demo" else 200)
    rules, bots = mix(args.mix)
    stack = Stack(StackConfig(engine=False, concurrency=args.concurrency, remote_worker=False))
    stack_rates: list[float] = []
    reference_rates: list[float] = []
    try:
        stack.start()
        store = RedisStore(redis.Redis.from_url(stack.redis_url))
        overrides = {k: v for k, v in rules.to_dict().items() if preset("classic").to_dict()[k] != v}
        store.create_ladder(Ladder("bench", preset="classic", overrides=overrides, base_window=100.0))
        agents = [
            store.register_agent(f"{bot}-{index}", "builtin", bot=bot)[0].agent_id for index, bot in enumerate(bots)
        ]
        roles = stack_roles(stack)
        archive = connect(stack.database_url)

        def sample() -> dict[str, float]:
            return {role: cpu_seconds(pids) for role, pids in roles.items()}

        for round_no in range(1, args.rounds + 1):
            enroll(store, agents)
            rate, window, cpu_ms = measure_stack(store, "bench", args.warmup, matches, sample)
            drain(store, agents)  # the stack idles while the reference plays
            jobs = [(match_id, rules, *seats_and_seed(store, archive, match_id)) for match_id in window]
            reference, reference_cpu_ms = measure_inprocess(jobs, args.concurrency)
            stack_rates.append(rate)
            reference_rates.append(reference)
            split = ", ".join(f"{role} {ms:.2f}" for role, ms in cpu_ms.items())
            print(
                f"round {round_no}: stack {rate:.1f}/s, in-process {reference:.1f}/s, ratio {rate / reference:.2f}; "
                f"CPU ms/match: stack {sum(cpu_ms.values()):.2f} ({split}), in-process {reference_cpu_ms:.2f}",
                flush=True,
            )
    finally:
        stack.cleanup()
    ratios = [s / r for s, r in zip(stack_rates, reference_rates, strict=True)]
    middle = sorted(range(len(ratios)), key=ratios.__getitem__)[len(ratios) // 2]  # the median round
    print(
        f"mix {args.mix}: {args.rounds} rounds of {matches} matches, {len(bots)} built-in agents, "
        f"{args.concurrency} processes each side; ratios {' '.join(f'{x:.2f}' for x in ratios)}"
    )
    print(f"ladder: stack={stack_rates[middle]:.1f} inprocess={reference_rates[middle]:.1f} ratio={ratios[middle]:.2f}")


if __name__ == "__main__":
    main()
