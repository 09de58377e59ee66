"""Page times of the web app with many archived matches: the leaderboard page and the replay page,
each through the real path (HTTP -> the web app under uvicorn -> gRPC -> the matchmaker -> Redis for
the ratings, the SQL archive for the match), beside the web app's floor in the same run (/healthz:
HTTP and uvicorn, no gRPC). Also the match list (with its total), an agent's page (rating-history
chart) and the live parts of the leaderboard and agent pages (fetched again while a ladder plays). Last line:

    web: leaderboard_p95_ms=<n> replay_p95_ms=<n> matches=<n>

The matches are stored through the ladder store (claim, start, finish, rate: what a worker does),
with records of real games (a few distinct games, reused under each match's own id and seats), then
moved to the SQL archive (a throwaway PostgreSQL server) by the archiver, which leaves Redis holding
none of them: every match the pages read comes from the archive.

Usage: python bench/web.py [--matches 10000] [--requests 300]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import redis

from arena.archive import queries
from arena.archive.db import connect
from arena.archive.local_postgres import LocalPostgres
from arena.embedded_redis import EmbeddedRedis
from arena.ladder import archiving
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from ohell.bots import make_bot
from ohell.match import play_game
from ohell.presets import preset
from ohell.record import build_record
from ohell.state import Game

LADDER = "bench"
SEATS = 4


def sample_records(count: int) -> list[dict[str, object]]:
    game = Game(preset("classic"), SEATS)
    records = []
    for seed in range(count):
        bots = [make_bot("heuristic" if i % 2 else "random", seed * 8 + i) for i in range(SEATS)]
        state = play_game(game, bots, seed)
        records.append(build_record(state, [{"name": f"s{i}"} for i in range(SEATS)], seed=seed))
    return records


def seed_matches(store: RedisStore, matches: int, agents: int, rng: random.Random) -> list[str]:
    store.create_ladder(Ladder(LADDER, base_window=1000.0))
    ids = []
    for index in range(agents):
        agent, _ = store.register_agent(f"agent-{index:03d}", "builtin", bot="random")
        store.join(LADDER, agent.agent_id, None, enroll=True)
        ids.append(agent.agent_id)
    names = {agent_id: f"agent-{i:03d}" for i, agent_id in enumerate(ids)}
    records = sample_records(24)
    match_ids: list[str] = []
    while len(match_ids) < matches:
        shuffled = rng.sample(ids, len(ids))
        tables = [shuffled[i : i + SEATS] for i in range(0, len(shuffled) - SEATS + 1, SEATS)]
        tables = tables[: matches - len(match_ids)]
        for table, match_id in zip(tables, store.claim(LADDER, tables, int(time.time() * 1000)), strict=True):
            if match_id is None:
                continue
            status, info = store.start_match_info(match_id, "bench", 60.0)
            assert status == "run", status
            record = copy.deepcopy(rng.choice(records))
            record["match_id"] = match_id
            record["seats"] = [{"name": names[a], "kind": "builtin", "agent_id": a} for a in table]
            store.finish_match(match_id, record, info)
            match_ids.append(match_id)
    store.catch_up_ratings(LADDER)
    return match_ids


def start(command: list[str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    # the bench is one visitor asking as fast as it can: it times pages, not the per-visitor limit
    env = os.environ | {"OHELL_WEB_RATE_LIMIT": "1000000:1000000"}
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while not (found := re.search(r"service on port (\d+)", log.read_text())):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{command[2]} did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.05)
    return process, int(found.group(1))


def p95_ms(client: httpx.Client, paths: list[str]) -> float:
    times = []
    for path in paths:
        began = time.perf_counter()
        reply = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
        assert reply.status_code == 200, (path, reply.status_code, reply.text[:300])
    return statistics.quantiles(times, n=20)[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=40)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(1)
    logs = Path(tempfile.mkdtemp(prefix="ohell-bench-web-"))
    processes: list[subprocess.Popen[bytes]] = []
    with LocalPostgres() as postgres, EmbeddedRedis() as server:
        try:
            began = time.perf_counter()
            store = RedisStore(redis.Redis.from_url(server.url))
            match_ids = seed_matches(store, args.matches, args.agents, rng)
            stored = time.perf_counter() - began
            database_url = postgres.create_database("bench")
            engine = connect(database_url)
            began = time.perf_counter()
            while archiving.archive_pending(store, engine, batch=archiving.BATCH).archived:
                pass
            archived = queries.count_matches(engine, LADDER)
            assert archived == len(match_ids) and store.archive_backlog() == 0, (archived, store.archive_backlog())
            assert not store.list_matches(LADDER, "", 0, 10), "Redis still holds finished matches"
            engine.dispose()
            print(
                f"stored {len(match_ids)} matches in {stored:.1f} s, "
                f"archived them in {time.perf_counter() - began:.1f} s"
            )
            python = sys.executable
            command = [python, "-m", "services.matchmaker", "--address", "127.0.0.1:0", "--redis-url", server.url]
            command += ["--database-url", database_url, "--no-forming"]
            matchmaker, mm_port = start(command, logs / "matchmaker.log")
            processes.append(matchmaker)
            command = [python, "-m", "services.web", "--address", "127.0.0.1:0", "--matchmaker", f"127.0.0.1:{mm_port}"]
            web, web_port = start(command, logs / "web.log")
            processes.append(web)
            agent = store.agent_by_name("agent-000").agent_id
            with httpx.Client(base_url=f"http://127.0.0.1:{web_port}", timeout=30) as client:
                listing = client.get(f"/matches?ladder={LADDER}").text
                total = re.search(r'id="total">(\d+)', listing)
                assert total and int(total.group(1)) == len(match_ids), total
                p95_ms(client, ["/healthz", f"/ladders/{LADDER}", f"/matches/{match_ids[0]}"] * 5)  # warm up
                floor = p95_ms(client, ["/healthz"] * args.requests)
                board = p95_ms(client, [f"/ladders/{LADDER}"] * args.requests)
                replay = p95_ms(client, [f"/matches/{rng.choice(match_ids)}" for _ in range(args.requests)])
                few = max(args.requests // 3, 20)
                matches = p95_ms(client, [f"/matches?ladder={LADDER}"] * few)
                agent_page = p95_ms(client, [f"/agents/{agent}?ladder={LADDER}"] * few)
                board_part = p95_ms(client, [f"/ladders/{LADDER}/live"] * few)
                agent_part = p95_ms(client, [f"/agents/{agent}/live?ladder={LADDER}"] * few)
            print(f"reference: healthz_p95_ms={floor:.1f} (HTTP + uvicorn, no gRPC)")
            print(
                f"match list (50 of {len(match_ids)}, with the total) p95 {matches:.1f} ms; "
                f"agent page (rating history of ~{4 * len(match_ids) // args.agents} matches) p95 {agent_page:.1f} ms"
            )
            print(  # what a visitor's page fetches again while the ladder plays (static/live-part.js)
                f"live parts: leaderboard p95 {board_part:.1f} ms (every 2 s), "
                f"agent p95 {agent_part:.1f} ms (every 5 s)"
            )
            print(f"ratios to the floor: leaderboard {board / floor:.1f}x, replay {replay / floor:.1f}x")
            print(f"web: leaderboard_p95_ms={board:.1f} replay_p95_ms={replay:.1f} matches={archived}")
        finally:
            for process in processes:
                process.terminate()
                process.wait(10)


if __name__ == "__main__":
    main()
