"""Two whole stacks on one redis-server, one with a non-default key prefix: each plays its own
ladder (built-in agents and a connected agent on its own engine gateway) and sees nothing of the
other's data, although both use the same ladder name, agent names and agent numbers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
import redis

from arena.archive import queries
from arena.archive.db import connect
from arena.embedded_redis import EmbeddedRedis
from arena.keys import DEFAULT_PREFIX, Keys
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata

from .helpers import builtin_ladder, leave_all, seating_report, settle, wait_until
from .test_e2e import QueueHolder

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out

PREFIXES = (DEFAULT_PREFIX, "blue:")


def test_two_stacks_with_different_prefixes_share_a_redis_and_see_nothing_of_each_other(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    stacks = {prefix: make_stack(engine=True, prefix=prefix, builtin_workers=1, concurrency=1) for prefix in PREFIXES}
    stores = {prefix: RedisStore(client, Keys(prefix)) for prefix in PREFIXES}
    builtins = {
        prefix: builtin_ladder(stores[prefix], "iso", bots=("heuristic", "random", "random")) for prefix in PREFIXES
    }
    agents: list[subprocess.Popen[bytes]] = []
    holders: dict[str, QueueHolder] = {}
    connected: dict[str, str] = {}
    agent_logs: dict[str, Path] = {}
    channels = [grpc.insecure_channel(stacks[prefix].matchmaker_address) for prefix in PREFIXES]
    try:
        for prefix, channel in zip(PREFIXES, channels, strict=True):
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            reply = stub.RegisterAgent(
                pb.RegisterAgentRequest(name="remote", kind=pb.AGENT_KIND_CONNECTED),
                metadata=auth_metadata(stacks[prefix].host_token),
            )
            connected[prefix] = reply.agent.agent_id
            command = [
                sys.executable,
                "-m",
                "arena.cli",
                "bot",
                "connect",
                "--bot",
                "random",
                "--address",
                stacks[prefix].engine_address,
                "--token",
                reply.token,
            ]
            output = agent_logs[prefix] = stacks[prefix].log_dir / "agent.log"
            with open(output, "wb") as log:  # the process keeps its own copy of the descriptor
                agents.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
            holders[prefix] = QueueHolder(stub, "iso", reply.agent.agent_id, reply.token)
        wait_until(
            lambda: all(len(holder.seated) >= 2 for holder in holders.values()),
            90,
            "the connected agent of each stack to be seated twice",
            report=lambda: "\n".join(
                seating_report(stacks[p], stores[p], "iso", {connected[p]: agent_logs[p]}) for p in PREFIXES
            ),
        )
    finally:
        for holder in holders.values():
            holder.close()
        for prefix in PREFIXES:
            leave_all(stores[prefix], "iso", builtins[prefix])
            settle(stores[prefix], ["iso"])
        for process in agents:
            process.terminate()
            process.wait(10)
        for channel in channels:
            channel.close()

    # the same agent number and names on both stacks, yet two agents
    assert connected[PREFIXES[0]] == connected[PREFIXES[1]]
    for prefix in PREFIXES:
        store = stores[prefix]
        wait_until(lambda: store.archive_backlog() == 0, 60, "every finished match to be archived")  # noqa: B023
        archive = connect(stacks[prefix].database_url)  # each stack its own archive
        played = queries.list_matches(archive, "iso", limit=500)
        assert played and len(played) == store.client.xlen(store.keys.log("iso"))
        for match in played:  # every table of this stack seated this stack's agents only
            record = queries.get_record(archive, match.match_id)
            assert record is not None
            assert {seat["agent_id"] for seat in record["seats"]} <= set(builtins[prefix]) | {connected[prefix]}
        seated = set(holders[prefix].seated)
        assert seated <= {match.match_id for match in played}
        assert store.leaderboard("iso", 0, 10)[1] == 4
    # every key of the ladders' data lives under one of the two prefixes; Celery's own keys aside
    ours = [key.decode() for key in client.scan_iter(count=1000) if not key.startswith((b"_kombu", b"unacked"))]
    assert ours and all(key.startswith(PREFIXES) for key in ours), sorted(ours)[:20]
    for prefix in PREFIXES:
        mine = {key[len(prefix) :] for key in ours if key.startswith(prefix)}
        assert {"log:iso", "agent_tokens", f"agent:{connected[prefix]}", f"seated:{connected[prefix]}"} <= mine
    tokens = [set(client.hkeys(Keys(prefix).agent_tokens)) for prefix in PREFIXES]
    assert tokens[0] and tokens[1] and tokens[0].isdisjoint(tokens[1])
    client.close()
