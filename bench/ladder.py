"""Rated matches per second through the whole ladder stack (matchmaker process, Celery worker
processes, Redis) with built-in bots, against the same games played in-process on as many
processes as the workers have (best of two runs after the stack run, so the ratio errs low).
Last line:

    ladder: stack=<matches/s> inprocess=<matches/s> ratio=<stack/inprocess>

Usage: python bench/ladder.py [--mix demo|light] [--matches N] [--concurrency 2]

--mix demo (default): the demo ladder's bots (random, heuristic, strong) and rules (classic with
hands of 5, 4, 3, 2, 1 cards); --mix light: heuristic and random bots on full classic games,
which cost ~7 ms each, so the stack's fixed cost per match (~7 ms of CPU over Celery, Redis and
the matchmaker) weighs most there.
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool
from typing import Any

import redis

from arena.ladder.demo import DEMO_OPTIONS, demo_agents
from arena.ladder.hosting import play_builtin
from arena.ladder.stack import Stack, StackConfig
from arena.services.matchmaker.model import Ladder
from arena.services.matchmaker.redis_store import RedisStore
from ohell.presets import preset
from ohell.rules import Rules, parse_option


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


def mix(name: str) -> tuple[Rules, list[str]]:
    """(rules, bots of the ladder's agents) of a benchmark mix."""
    if name == "light":
        return preset("classic"), ["heuristic", "random"] * 24
    rules = Rules.from_dict(dict(parse_option(text) for text in DEMO_OPTIONS), base=preset("classic"))
    return rules, [bot for _, bot in demo_agents()] * 6


def enroll(store: RedisStore, agents: list[str]) -> None:
    for agent in agents:
        store.join("bench", agent, None, enroll=True)


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
        agents = [store.register_agent(f"{bot}-{index}", "builtin", bot=bot)[0].agent_id
                  for index, bot in enumerate(bots)]  # fmt: skip
        for round_no in range(1, args.rounds + 1):
            enroll(store, agents)
            rate, window = measure_stack(store, "bench", args.warmup, matches)
            drain(store, agents)  # the stack idles while the reference plays
            jobs = [(match_id, rules, store.get_match(match_id).seats) for match_id in window]
            reference = measure_inprocess(jobs, args.concurrency)
            stack_rates.append(rate)
            reference_rates.append(reference)
            print(f"round {round_no}: stack {rate:.1f}/s, in-process {reference:.1f}/s, ratio {rate / reference:.2f}",
                  flush=True)
    finally:
        stack.cleanup()
    ratios = [s / r for s, r in zip(stack_rates, reference_rates, strict=True)]
    middle = sorted(range(len(ratios)), key=ratios.__getitem__)[len(ratios) // 2]  # the median round
    print(f"mix {args.mix}: {args.rounds} rounds of {matches} matches, {len(bots)} built-in agents, "
          f"{args.concurrency} processes each side; ratios {' '.join(f'{x:.2f}' for x in ratios)}")
    print(f"ladder: stack={stack_rates[middle]:.1f} inprocess={reference_rates[middle]:.1f} "
          f"ratio={ratios[middle]:.2f}")


if __name__ == "__main__":
    main()
