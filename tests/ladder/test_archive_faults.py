"""The archive on the real stack: the database stops during a ladder run; every match still ends up
archived exactly once and rated exactly once, and the matchmaker's history RPCs read the archive."""

from __future__ import annotations

import json
from collections.abc import Callable

import grpc
import pytest

from arena.archive import queries
from arena.archive.db import connect
from arena.archive.local_postgres import LocalPostgres
from arena.ladder.matchlog import read_log
from arena.ladder.ratings import replay, stored_ratings
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc

from .helpers import builtin_ladder, leave_all, settle, wait_until

pytestmark = pytest.mark.slow  # a whole stack and its own PostgreSQL server


def test_database_stopped_mid_run_loses_and_repeats_nothing(
    make_stack: Callable[..., Stack], store: RedisStore
) -> None:
    database = LocalPostgres()  # its own server: this test stops it
    try:
        database.start()
        url = database.create_database("arena")
        make_stack(engine=False, remote_worker=False, database_url=url)
        agents = builtin_ladder(store, "f", bots=("heuristic", "random") * 3, seats=3)
        archive = connect(url)
        wait_until(lambda: queries.count_matches(archive, "f") >= 3, 60, "the first matches to be archived")
        archive.dispose()
        database.stop()
        rated_before = store.client.get(store.keys.rated("f"))
        logged_before = store.client.xlen(store.keys.log("f"))
        wait_until(
            lambda: (
                store.client.xlen(store.keys.log("f")) >= logged_before + 10
                and store.client.get(store.keys.rated("f")) != rated_before
            ),
            60,
            "matches to go on being played and rated while the database is down",
        )
        assert store.archive_backlog() >= 10
        database.start()
        leave_all(store, "f", agents)
        settle(store, ["f"])
        wait_until(lambda: store.archive_backlog() == 0, 90, "the backlog to drain")

        entries = list(read_log(store.client, store.keys, "f"))
        logged = [summary["match_id"] for _, summary in entries]
        archive = connect(url)
        in_order = list(queries.in_log_order(archive, "f"))
        assert [m.match_id for m in in_order] == logged  # every match, once, in log order
        ratings, _ = replay(summary for _, summary in entries)
        assert stored_ratings(store.client, store.keys, "f") == ratings  # rated exactly once
        assert replay(queries.summary(m) for m in in_order)[0] == ratings
        for agent, (mu, sigma) in ratings.items():
            history = queries.rating_history(archive, "f", agent, limit=5000)
            assert len(history) == sum(agent in s["agents"] for _, s in entries)
            assert (history[-1].mu_after, history[-1].sigma_after) == (mu, sigma)
        assert not any(store.client.exists(store.keys.record(m), store.keys.match(m)) for m in logged)
        archive.dispose()
    finally:
        database.cleanup()


def test_history_rpcs_read_the_archive(make_stack: Callable[..., Stack], store: RedisStore, postgres_url: str) -> None:
    stack = make_stack(engine=False, remote_worker=False, database_url=postgres_url)
    agents = builtin_ladder(store, "h", bots=("heuristic", "random") * 3, seats=3)
    archive = connect(postgres_url)
    wait_until(lambda: queries.count_matches(archive, "h") >= 6, 60, "six archived matches")
    leave_all(store, "h", agents)
    settle(store, ["h"])
    wait_until(lambda: store.archive_backlog() == 0, 60, "the backlog to drain")
    total = queries.count_matches(archive, "h")
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        seen, token = [], ""
        while True:
            page = stub.ListMatches(pb.ListMatchesRequest(ladder="h", page_size=4, page_token=token))
            seen += page.matches
            token = page.next_page_token
            if not token:
                break
        assert len(seen) == total == len({m.match_id for m in seen})
        assert all(m.archived and m.state == "finished" and len(m.agent_names) == 3 for m in seen)
        assert seen[0].agent_names[0].startswith("h-")
        mine = stub.ListMatches(pb.ListMatchesRequest(agent_id=agents[0], page_size=500)).matches
        assert mine and all(agents[0] in m.agent_ids for m in mine)
        got = stub.GetMatch(pb.GetMatchRequest(match_id=seen[0].match_id))
        assert json.loads(got.record_json)["match_id"] == seen[0].match_id and got.match.archived
        points = stub.GetRatingHistory(pb.GetRatingHistoryRequest(ladder="h", agent_id=agents[0])).points
        assert (
            len(points) == len(mine)
            and points[-1].mu_after == stored_ratings(store.client, store.keys, "h")[agents[0]][0]
        )
        request = pb.GetRatingHistoryRequest(ladder="h", agent_id=agents[0], page_size=2, newest_first=True)
        latest = stub.GetRatingHistory(request)
        assert [p.match_id for p in latest.points] == [p.match_id for p in points[::-1][:2]]
        request.page_token = latest.next_page_token
        assert stub.GetRatingHistory(request).points[0].match_id == points[-3].match_id
        for bad in (
            pb.ListMatchesRequest(ladder="h", page_token="garbage"),
            pb.ListMatchesRequest(ladder="h", since_ms=-1),
            pb.ListMatchesRequest(page_size=501),
        ):
            with pytest.raises(grpc.RpcError) as error:
                stub.ListMatches(bad)
            assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as error:
            stub.GetMatch(pb.GetMatchRequest(match_id="h-999999"))
        assert error.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as error:
            stub.GetRatingHistory(pb.GetRatingHistoryRequest(ladder="nope", agent_id=agents[0]))
        assert error.value.code() == grpc.StatusCode.NOT_FOUND
    archive.dispose()
