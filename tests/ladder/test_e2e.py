"""The whole ladder end to end: real redis-server, matchmaker and engine processes, Celery worker
processes, gRPC; built-in agents and connected agents (separate processes on the gateway)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from statistics import mean

import grpc
import pytest

from arena.archive import queries
from arena.archive.db import connect
from arena.clock import now_ms
from arena.ladder.matchlog import read_log
from arena.ladder.ratings import replay, stored_ratings
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata
from ohell.referee import referee

from .helpers import builtin_ladder, leave_all, scrape, seating_report, settle, wait_until

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out

MATCHES = 110


class QueueHolder:
    """Holds a connected agent's WatchQueue stream in a thread and counts its tables. Like a real
    agent it opens the stream again when it ends (a ticket whose agent has not reached the gateway
    yet, as under load, is refused or expires)."""

    def __init__(self, stub: matchmaker_pb2_grpc.MatchmakerServiceStub, ladder: str, agent_id: str, token: str):
        self.request = pb.WatchQueueRequest(ladder=ladder, agent_id=agent_id)
        self.stub, self.metadata = stub, auth_metadata(token)
        self.seated: list[str] = []
        self.closing = threading.Event()
        self.call = self.stub.WatchQueue(self.request, metadata=self.metadata)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.closing.is_set():
            try:
                for response in self.call:
                    self.seated.append(response.match_id)
            except grpc.RpcError:
                pass
            if self.closing.wait(0.2):
                return
            self.call = self.stub.WatchQueue(self.request, metadata=self.metadata)

    def close(self) -> None:
        self.closed_ms = now_ms()
        self.closing.set()
        self.call.cancel()
        self.thread.join(5)


def test_ladder_end_to_end(make_stack: Callable[..., Stack], store: RedisStore) -> None:
    stack = make_stack(engine=True, metrics=True)
    builtins = builtin_ladder(store, "e2e", bots=("heuristic", "random") * 6)
    agents, holders = [], []
    agent_logs: dict[str, Path] = {}
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        try:
            for index in range(2):
                reply = stub.RegisterAgent(
                    pb.RegisterAgentRequest(name=f"remote-{index}", kind=pb.AGENT_KIND_CONNECTED, version="1"),
                    metadata=auth_metadata(stack.host_token),
                )
                command = [
                    sys.executable,
                    "-m",
                    "arena.cli",
                    "bot",
                    "connect",
                    "--bot",
                    "heuristic",
                    "--address",
                    stack.engine_address,
                    "--token",
                    reply.token,
                ]
                output = agent_logs[reply.agent.agent_id] = stack.log_dir / f"agent-{index}.log"
                with open(output, "wb") as log:  # the process keeps its own copy of the descriptor
                    agents.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
                holders.append((reply.agent.agent_id, QueueHolder(stub, "e2e", reply.agent.agent_id, reply.token)))
            wait_until(lambda: store.client.xlen(store.keys.log("e2e")) >= MATCHES, 90, f"{MATCHES} logged matches")
            report = lambda: seating_report(stack, store, "e2e", agent_logs)  # noqa: E731
            wait_until(
                lambda: all(len(h.seated) >= 2 for _, h in holders), 90, "connected agents to play", report=report
            )
        finally:
            for _, holder in holders:
                holder.close()
            leave_all(store, "e2e", builtins)
            settle(store, ["e2e"])
            for process in agents:
                process.terminate()
                process.wait(10)
        check_history(store, stub, [agent for agent, _ in holders])
    wait_until(lambda: store.archive_backlog() == 0, 60, "every finished match to be archived")
    archive = connect(stack.database_url)
    for agent, holder in holders:  # every table the agent sat at was announced on its stream, once
        mine = queries.list_matches(archive, agent_id=agent, limit=500)
        played = {m.match_id for m in mine}
        before_close = {m.match_id for m in mine if m.created_ms < holder.closed_ms - 500}
        assert before_close <= set(holder.seated) <= played and len(holder.seated) == len(set(holder.seated))
    entries = list(read_log(store.client, store.keys, "e2e"))
    logged = [summary["match_id"] for _, summary in entries]
    created = int(store.client.get(store.keys.match_seq))
    assert len(logged) == len(set(logged)) == created >= MATCHES  # every match finished and logged once
    assert [m.match_id for m in queries.in_log_order(archive, "e2e")] == logged  # archived once each
    expected, stats = replay(summary for _, summary in entries)
    assert stored_ratings(store.client, store.keys, "e2e") == expected  # rated exactly once, in log order
    assert sum(counts[0] for counts in stats.values()) == 4 * len(logged)
    heuristic = [expected[a][0] for a in builtins[0::2]]
    random_ = [expected[a][0] for a in builtins[1::2]]
    assert mean(heuristic) > mean(random_) + 2, (heuristic, random_)
    finished = sum(
        scrape(port, "ohell_matches_finished_total")
        for name, port in stack.metrics_ports.items()
        if name.startswith("worker")
    )
    assert finished == len(logged)
    formed = sum(  # by the matchmaker, or by a worker forming its batch's next tables
        scrape(port, "ohell_tables_formed_total")
        for name, port in stack.metrics_ports.items()
        if name == "matchmaker" or name.startswith("worker")
    )
    assert formed == created


def check_history(store: RedisStore, stub: matchmaker_pb2_grpc.MatchmakerServiceStub, remote: list[str]) -> None:
    first = stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder="e2e", page_size=5))
    rest = stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder="e2e", page_size=500, page_token=first.next_page_token))
    board = list(first.standings) + list(rest.standings)
    _, stats = replay(summary for _, summary in read_log(store.client, store.keys, "e2e"))
    assert first.total == len(board) == 14 and not rest.next_page_token
    assert [s.rank for s in board] == list(range(1, 15))
    assert [s.ordinal for s in board] == sorted((s.ordinal for s in board), reverse=True)
    for agent in remote:
        detail = stub.GetAgent(pb.GetAgentRequest(agent_id=agent, ladder="e2e"))
        assert detail.agent.kind == pb.AGENT_KIND_CONNECTED and detail.standing.games >= 2
        games, hands, exact = stats[agent][:3]  # as the log says (STAT_FIELDS order)
        assert (detail.standing.games, detail.standing.hands) == (games, hands) and hands >= 2 * games
        assert detail.standing.exact_bid_rate == pytest.approx(exact / hands)  # 0 exact bids of 4 happens
        matches = stub.ListMatches(pb.ListMatchesRequest(ladder="e2e", agent_id=agent, page_size=1))
        assert len(matches.matches) == 1 and matches.next_page_token
        reply = stub.GetMatch(pb.GetMatchRequest(match_id=matches.matches[0].match_id))
        record = json.loads(reply.record_json)
        assert referee(record).valid
        seat = next(seat for seat in record["seats"] if seat.get("agent_id") == agent)
        assert seat["kind"] == "connected" and seat["version"] == "1" and reply.match.state == "finished"
