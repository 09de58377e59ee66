"""An endpoint agent enters a ladder by itself, as docs/protocol.md's quick start says: `ohell bot run
BOT --serve HOST:PORT --ladder L` serves the bot where the host registered it and holds its ticket
with its token. Before, the only tool was `ohell bot run` without --serve, which also dialled the
gateway, logged no match (the platform dials the endpoint) and never reached --matches; `ohell agent
register --kind endpoint --join` pointed to it."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore
from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc, matchmaker_pb2_grpc
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import auth_metadata
from arena.wire import rules_to_proto
from ohell.rules import Rules

from ..ladder.helpers import match_state
from .stacks import LineLog, endpoint_ladder, free_port, start_stack, wait_until

pytestmark = pytest.mark.slow  # a whole stack

ROOT = Path(__file__).resolve().parents[2]


def test_an_endpoint_agent_serves_and_queues_itself_on_a_ladder(redis_server: EmbeddedRedis) -> None:
    stack = start_stack(redis_server, engine=False)
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    author = None
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            port = free_port()
            agent = endpoint_ladder(stub, stack.host_token, port)
            command = [sys.executable, "-m", "arena.cli", "bot", "run", "examples/python_bot.py:HighCards"]
            command += ["--serve", f"127.0.0.1:{port}", "--ladder", "ep", "--matchmaker", stack.matchmaker_address]
            env = os.environ | {"OHELL_AGENT_TOKEN": agent.token}
            author = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            assert author.stdout is not None
            assert author.stdout.readline().strip() == f"endpoint agent HighCards serving on port {port}"
            assert author.stderr is not None
            logged = LineLog(author.stderr)
            finished = lambda: match_state(stack, store, "ep-1")[0] == "finished"  # noqa: E731
            wait_until(finished, 60, "the endpoint's match to finish", stack)
            record = json.loads(stub.GetMatch(pb.GetMatchRequest(match_id="ep-1")).record_json)
        assert record["faults"] == []
        assert [seat["kind"] for seat in record["seats"]].count("endpoint") == 1
        # the store says finished before the MatchEnded sent to the endpoint is logged there
        logged.wait_for("match ep-1 ended", 30)
        author.send_signal(signal.SIGINT)
        assert author.wait(20) == 0, logged.text()
        log = logged.text()
        assert "queued on ladder 'ep'" in log and "match ep-1 ended" in log, log
    finally:
        if author is not None and author.poll() is None:
            author.kill()
            author.wait(10)
        stack.cleanup(graceful=False)
        store.client.close()


def test_an_endpoint_on_a_ladder_that_is_not_there_ends_in_one_line(redis_server: EmbeddedRedis) -> None:
    stack = start_stack(redis_server, engine=False, builtin_workers=0, remote_worker=False)
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            port = free_port()
            agent = stub.RegisterAgent(
                pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=f"127.0.0.1:{port}"),
                metadata=auth_metadata(stack.host_token),
            )
        command = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--serve", f"127.0.0.1:{port}"]
        command += ["--ladder", "nope", "--matchmaker", stack.matchmaker_address, "--token", agent.token]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().startswith("error: the matchmaker at") and "no ladder 'nope'" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        stack.cleanup(graceful=False)


def test_a_stopping_endpoint_leaves_the_queue_before_its_last_calls_end(redis_server: EmbeddedRedis) -> None:
    """On Ctrl-C the endpoint's server lets calls in flight finish (5 s) while its ticket stayed
    queued: a table formed then dialled a server that refused the call, a fault of the agent's. The
    ticket goes first now."""
    stack = start_stack(redis_server, engine=False, builtin_workers=0, remote_worker=False)
    author = None
    in_flight: queue.Queue[agent_pb2.PlayRequest | None] = queue.Queue()
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            host = auth_metadata(stack.host_token)
            stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="solo", seats=3)), metadata=host)
            port = free_port()
            agent = stub.RegisterAgent(
                pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=f"127.0.0.1:{port}"),
                metadata=host,
            )
            command = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--serve", f"127.0.0.1:{port}"]
            command += ["--ladder", "solo", "--matchmaker", stack.matchmaker_address, "--token", agent.token]
            author = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert author.stdout is not None and "serving on port" in author.stdout.readline()
            assert author.stderr is not None
            logged = LineLog(author.stderr)
            waiting = lambda: stub.GetLadder(pb.GetLadderRequest(name="solo")).tickets_waiting  # noqa: E731
            wait_until(lambda: waiting() == 1, 30, "the endpoint's ticket", stack)
            with grpc.insecure_channel(f"127.0.0.1:{port}") as endpoint:  # a match in play: a call in flight
                play = agent_pb2_grpc.AgentServiceStub(endpoint).Play(
                    iter(in_flight.get, None), metadata=auth_metadata(agent.token)
                )
                # the call is in the server's hands once it logs the match the call started
                started = agent_pb2.PlayRequest()
                started.event.match_started.match_id = "in-flight"
                started.event.match_started.rules.CopyFrom(rules_to_proto(Rules()))
                in_flight.put(started)
                logged.wait_for("match in-flight started", 30)
                author.send_signal(signal.SIGINT)
                wait_until(lambda: waiting() == 0, 4, "the ticket to leave the queue")
                assert author.poll() is None  # still serving the call in flight
                in_flight.put(None)
                play.cancel()
        author.wait(20)
    finally:
        in_flight.put(None)
        if author is not None and author.poll() is None:
            author.kill()
            author.wait(10)
        stack.cleanup(graceful=False)
