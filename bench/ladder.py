"""Rated matches per second through the whole ladder stack (matchmaker process, Celery worker
processes, Redis) with built-in bots, against the same games played in-process on as many
processes as the workers have (measured before and after the stack run, averaged: the load of a
shared machine drifts). Last line:

    ladder: stack=<matches/s> inprocess=<matches/s> ratio=<stack/inprocess>

Usage: python bench/ladder.py [--matches 200] [--concurrency 2] [--rules classic]
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool
from typing import Any

import redis

from arena.ladder.hosting import play_builtin
from arena.ladder.stack import Stack, StackConfig
from arena.services.matchmaker.model import Ladder
from arena.services.matchmaker.redis_store import RedisStore


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


def measure_stack(store: RedisStore, ladder: str, warmup: int, matches: int) -> tuple[float, list[str]]:
    """Matches rated per second over ``matches`` logged matches after ``warmup``."""
    log = store.keys.log(ladder)
    wait_for(lambda: store.client.xlen(log) >= warmup)
    start_count, started = store.client.xlen(log), time.perf_counter()
    wait_for(lambda: store.client.xlen(log) >= start_count + matches)
    entries = store.client.xrange(log, count=start_count + matches)
    target = stream_id(entries[-1][0])
    wait_for(lambda: stream_id(store.client.get(store.keys.rated(ladder))) >= target)
    seconds = time.perf_counter() - started
    window = [fields[b"match"].decode() for _, fields in entries[start_count:]]
    return matches / seconds, window


def play(job: tuple[str, Any, list[dict[str, Any]]]) -> int:
    record = play_builtin(*job)
    return len(record["hands"])


def measure_inprocess(jobs: list[tuple[str, Any, list[dict[str, Any]]]], processes: int) -> float:
    with Pool(processes) as pool:
        pool.map(play, jobs[:processes])  # start-up and imports are not part of the games
        started = time.perf_counter()
        pool.map(play, jobs, chunksize=1)
        return len(jobs) / (time.perf_counter() - started)


def measure_warmup_jobs(args: argparse.Namespace) -> list[tuple[str, Any, list[dict[str, Any]]]]:
    """Games like the ladder's (same rules, heuristic and random seats) for the first reference run."""
    from ohell.presets import preset

    seats = [{"name": bot, "kind": "builtin", "bot": bot} for bot in ("heuristic", "random", "heuristic", "random")]
    return [(f"warm-{index}", preset(args.rules), seats) for index in range(args.matches)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--rules", default="classic")
    args = parser.parse_args()
    warm = measure_warmup_jobs(args)
    before = measure_inprocess(warm, args.concurrency)
    stack = Stack(StackConfig(engine=False, concurrency=args.concurrency, remote_worker=False))
    try:
        stack.start()
        store = RedisStore(redis.Redis.from_url(stack.redis_url))
        ladder = store.create_ladder(Ladder("bench", preset=args.rules, base_window=100.0))
        for index in range(args.agents):
            bot = ("heuristic", "random")[index % 2]
            agent, _ = store.register_agent(f"{bot}-{index}", "builtin", bot=bot)
            store.join("bench", agent.agent_id, None, enroll=True)
        rate, window = measure_stack(store, "bench", args.warmup, args.matches)
        jobs = [(match_id, ladder.rules(), store.get_match(match_id).seats) for match_id in window]
        for agent in store.client.smembers(store.keys.enrolled("bench")):
            store.leave("bench", agent.decode())
    finally:
        stack.cleanup()
    after = measure_inprocess(jobs, args.concurrency)
    reference = (before + after) / 2  # around the stack run: the machine's load drifts
    print(f"{args.matches} matches of {args.rules}, {args.agents} built-in agents, {args.concurrency} processes; "
          f"in-process before {before:.1f}/s, after {after:.1f}/s")
    print(f"ladder: stack={rate:.1f} inprocess={reference:.1f} ratio={rate / reference:.2f}")


if __name__ == "__main__":
    main()
