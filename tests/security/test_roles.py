"""Class 4: the host role. Only the host token administers (ladders, agents, tokens); agents only
play; anonymous callers may self-register only while an open ladder exists; every size a caller
controls is bounded; every caller is rate limited, across processes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
import redis

from arena.clock import now_ms
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import Revoked
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata

from ..matchmaker.test_store import fake_record
from .conftest import HOST_TOKEN, Service

HOST = auth_metadata(HOST_TOKEN)
CLASSIC = rules_pb2.Rules(preset="classic")


def refused(call: Callable[..., object], request: object, metadata: object = None) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as error:
        call(request, metadata=metadata, timeout=10)
    return error.value.code(), error.value.details()


@pytest.mark.slow
def test_only_the_host_administers(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        agent = stub.RegisterAgent(pb.RegisterAgentRequest(name="player", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)
        as_agent = auth_metadata(agent.token)
        ladder = pb.Ladder(name="main", rules=CLASSIC)
        admin_calls = [
            (stub.CreateLadder, pb.CreateLadderRequest(ladder=ladder)),
            (stub.UpdateLadder, pb.UpdateLadderRequest(ladder=ladder)),
            (stub.PauseLadder, pb.PauseLadderRequest(name="main")),
            (stub.ResumeLadder, pb.ResumeLadderRequest(name="main")),
            (stub.DeleteLadder, pb.DeleteLadderRequest(name="main")),
            (stub.RegisterAgent, pb.RegisterAgentRequest(name="x", kind=pb.AGENT_KIND_BUILTIN, bot="random")),
            (stub.RotateAgentToken, pb.RotateAgentTokenRequest(agent_id=agent.agent.agent_id)),
            (stub.RevokeAgentToken, pb.RevokeAgentTokenRequest(agent_id=agent.agent.agent_id)),
            (stub.ListAgents, pb.ListAgentsRequest()),
        ]
        for call, request in admin_calls:
            assert refused(call, request)[0] == grpc.StatusCode.UNAUTHENTICATED, call
            assert refused(call, request, auth_metadata("forged-token"))[0] == grpc.StatusCode.UNAUTHENTICATED
            code, detail = refused(call, request, as_agent)
            assert code == grpc.StatusCode.PERMISSION_DENIED and "host token" in detail, call
        # the host does all of it
        assert stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST).ladder.name == "main"
        assert stub.PauseLadder(pb.PauseLadderRequest(name="main"), metadata=HOST).ladder.paused
        assert not stub.ResumeLadder(pb.ResumeLadderRequest(name="main"), metadata=HOST).ladder.paused
        ladder.seats = 5
        assert stub.UpdateLadder(pb.UpdateLadderRequest(ladder=ladder), metadata=HOST).ladder.seats == 5
        listed = stub.ListAgents(pb.ListAgentsRequest(), metadata=HOST).agents
        assert [a.name for a in listed] == ["player"]
        join = pb.JoinQueueRequest(ladder="main", agent_id=agent.agent.agent_id)
        assert stub.JoinQueue(join, metadata=as_agent).queued_at_ms > 0
        rotated = stub.RotateAgentToken(pb.RotateAgentTokenRequest(agent_id=agent.agent.agent_id), metadata=HOST)
        assert refused(stub.JoinQueue, join, as_agent)[0] == grpc.StatusCode.UNAUTHENTICATED  # the old token is dead
        assert stub.JoinQueue(join, metadata=auth_metadata(rotated.token)).queued_at_ms > 0
        assert stub.RevokeAgentToken(pb.RevokeAgentTokenRequest(agent_id=agent.agent.agent_id), metadata=HOST).revoked
        assert refused(stub.JoinQueue, join, auth_metadata(rotated.token))[0] == grpc.StatusCode.UNAUTHENTICATED
        assert stub.DeleteLadder(pb.DeleteLadderRequest(name="main"), metadata=HOST).deleted
        assert [lad.name for lad in stub.ListLadders(pb.ListLaddersRequest()).ladders] == []
        assert refused(stub.GetLadder, pb.GetLadderRequest(name="main"))[0] == grpc.StatusCode.NOT_FOUND


@pytest.mark.slow
def test_open_self_registration_and_ladder_entry(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        me = pb.RegisterAgentRequest(name="selfmade", kind=pb.AGENT_KIND_CONNECTED)
        code, detail = refused(stub.RegisterAgent, me)  # no open ladder yet: the refusal says why
        assert code == grpc.StatusCode.UNAUTHENTICATED and "LADDER_ENTRY_OPEN, and none is" in detail
        stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="closed", rules=CLASSIC)), metadata=HOST)
        open_ladder = pb.Ladder(name="open", rules=CLASSIC, entry=pb.LADDER_ENTRY_OPEN)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=open_ladder), metadata=HOST)
        mine = stub.RegisterAgent(me)
        assert mine.agent.self_registered and mine.token
        # a self-registered agent is connected only: the platform never runs or dials what a stranger names
        for kind, extra in (
            (pb.AGENT_KIND_BUILTIN, {"bot": "random"}),
            (pb.AGENT_KIND_ENDPOINT, {"endpoint": "10.0.0.1:80"}),
        ):
            code, detail = refused(stub.RegisterAgent, pb.RegisterAgentRequest(name="sneaky", kind=kind, **extra))
            assert code == grpc.StatusCode.PERMISSION_DENIED and "kind" in detail
        token = auth_metadata(mine.token)
        closed = pb.JoinQueueRequest(ladder="closed", agent_id=mine.agent.agent_id)
        code, detail = refused(stub.JoinQueue, closed, token)
        assert code == grpc.StatusCode.PERMISSION_DENIED and "host registered" in detail
        assert stub.JoinQueue(pb.JoinQueueRequest(ladder="open", agent_id=mine.agent.agent_id), metadata=token)
        # self-registration has its own, stricter limit per caller: a burst of 5, then 1 a minute
        for number in range(2):  # the 4th and 5th registrations of this caller
            stub.RegisterAgent(pb.RegisterAgentRequest(name=f"more{number}", kind=pb.AGENT_KIND_CONNECTED))
        code, detail = refused(stub.RegisterAgent, pb.RegisterAgentRequest(name="spam", kind=pb.AGENT_KIND_CONNECTED))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "self-registration" in detail
        assert stub.RegisterAgent(pb.RegisterAgentRequest(name="byhost", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)


OVERSIZED_LADDERS = [
    (pb.Ladder(name="nan", rules=CLASSIC, fill_after_seconds=float("nan")), "fill_after_seconds"),
    (pb.Ladder(name="inf", rules=CLASSIC, base_window=float("inf")), "base_window"),
    (pb.Ladder(name="neg", rules=CLASSIC, widen_per_second=-1.0), "widen_per_second"),
    (pb.Ladder(name="long", rules=rules_pb2.Rules(hand_sizes=[1] * 5000)), "hand_sizes"),
    (pb.Ladder(name="x" * 65, rules=CLASSIC), "ladder.name"),
    (pb.Ladder(name="bots", rules=CLASSIC, house_bots=["random"] * 6), "house_bots"),
]


@pytest.mark.slow
def test_ladder_sizes_are_bounded(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker").channel() as channel:  # one service for every case
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        for ladder, field in OVERSIZED_LADDERS:
            code, detail = refused(stub.CreateLadder, pb.CreateLadderRequest(ladder=ladder), HOST)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and field in detail, (field, code, detail)
        assert not stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders  # none was created


@pytest.mark.slow
def test_watch_queue_streams_are_bounded_per_agent(start_service: Callable[..., Service]) -> None:
    from services.matchmaker.queueing import MAX_WATCHES_PER_AGENT

    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="main", rules=CLASSIC)), metadata=HOST)
        greedy, other = (
            auth_metadata(
                stub.RegisterAgent(
                    pb.RegisterAgentRequest(name=name, kind=pb.AGENT_KIND_CONNECTED), metadata=HOST
                ).token
            )
            for name in ("greedy", "other")
        )

        def watch(token: object) -> Any:
            """A WatchQueue stream once the matchmaker answered it: open (queued), or ended (refused)."""
            call = stub.WatchQueue(pb.WatchQueueRequest(ladder="main"), metadata=token, timeout=60)
            call.initial_metadata()
            return call

        # each stream polls Redis ten times a second: 300 of one agent's made the matchmaker 50 times slower
        streams = [watch(greedy) for _ in range(MAX_WATCHES_PER_AGENT)]
        try:
            assert not any(call.done() for call in streams)
            refused_call = watch(greedy)
            streams.append(refused_call)  # cancelled at the end if it was not refused
            assert refused_call.done(), f"{MAX_WATCHES_PER_AGENT + 1} streams of one agent"
            assert refused_call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused_call.details()
            assert "WatchQueue" in refused_call.details()
            mine = watch(other)  # another agent has its own share
            assert not mine.done()
            mine.cancel()
            streams.pop(0).cancel()  # a closed stream frees its place
            deadline = time.monotonic() + 10
            while (again := watch(greedy)).done():
                assert time.monotonic() < deadline, "a closed stream's place was not freed"
                time.sleep(0.1)
            streams.append(again)
        finally:
            for call in streams:
                call.cancel()


@pytest.mark.slow
def test_ladder_count_is_bounded(start_service: Callable[..., Service]) -> None:
    from arena.ladder.limits import MAX_LADDERS

    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        for index in range(MAX_LADDERS):
            stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name=f"l{index}", rules=CLASSIC)), metadata=HOST)
        code, _ = refused(stub.CreateLadder, pb.CreateLadderRequest(ladder=pb.Ladder(name="one.more")), HOST)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert len(stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders) == MAX_LADDERS


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_rate_limits_are_per_caller_and_shared_across_processes(start_service: Callable[..., Service]) -> None:
    first = start_service("services.matchmaker", OHELL_RATE_LIMIT="0.5:6")
    second = start_service("services.matchmaker", OHELL_RATE_LIMIT="0.5:6")
    with first.channel() as one, second.channel() as two:
        stubs = [matchmaker_pb2_grpc.MatchmakerServiceStub(c) for c in (one, two)]
        for index in range(6):  # the burst, spread over both processes
            stubs[index % 2].ListLadders(pb.ListLaddersRequest(), timeout=10)
        for stub in stubs:
            with pytest.raises(grpc.RpcError) as limited:
                stub.ListLadders(pb.ListLaddersRequest(), timeout=10)
            assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "retry after" in limited.value.details()
            retry = dict(limited.value.trailing_metadata() or ())["retry-after"]
            assert 0 < float(retry) <= 2.0
        # another caller (a token) has its own budget; the host is not limited
        agent = stubs[0].RegisterAgent(pb.RegisterAgentRequest(name="a", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)
        stubs[1].ListLadders(pb.ListLaddersRequest(), metadata=auth_metadata(agent.token), timeout=10)
        for _ in range(10):
            stubs[0].ListLadders(pb.ListLaddersRequest(), metadata=HOST, timeout=10)


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_a_revoked_token_ends_the_agents_open_stream(start_service: Callable[..., Service]) -> None:
    import asyncio

    from .agents import Agent

    engine = start_service("services.engine")
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        agent = stub.RegisterAgent(pb.RegisterAgentRequest(name="doomed", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)

        async def run() -> grpc.aio.AioRpcError | None:
            connected = await Agent(engine.address, agent.token).start()
            assert connected.alive
            request = pb.RevokeAgentTokenRequest(agent_id=agent.agent.agent_id)
            await asyncio.to_thread(stub.RevokeAgentToken, request, metadata=HOST)
            assert connected.task is not None
            await asyncio.wait_for(connected.task, 15)  # the gateway re-checks its streams' tokens
            return connected.error

        error = asyncio.run(run())
    assert error is not None and error.code() == grpc.StatusCode.UNAUTHENTICATED and "revoked" in error.details()


@pytest.mark.slow
def test_a_revoked_agent_of_any_kind_is_seated_nowhere(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """Revoking an endpoint or built-in agent left its ticket (a built-in's never expires and comes back
    after each match) and an endpoint's dial token: the platform went on seating and dialling it."""
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladder = pb.Ladder(name="main", rules=CLASSIC, seats=3)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
        requests = [pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint="127.0.0.1:9")]
        requests += [pb.RegisterAgentRequest(name=f"b{n}", kind=pb.AGENT_KIND_BUILTIN, bot="random") for n in (1, 2, 3)]
        registered = {request.name: stub.RegisterAgent(request, metadata=HOST) for request in requests}
        ids = {name: reply.agent.agent_id for name, reply in registered.items()}
        for name in ("b1", "b2", "b3"):
            join = pb.JoinQueueRequest(ladder="main", agent_id=ids[name])
            stub.JoinQueue(join, metadata=auth_metadata(registered[name].token))
        (match_id,) = store.claim("main", [[ids["b1"], ids["b2"], ids["b3"]]], now_ms())
        ep_join = pb.JoinQueueRequest(ladder="main", agent_id=ids["ep"], lease_seconds=3600)
        stub.JoinQueue(ep_join, metadata=auth_metadata(registered["ep"].token))
        for name in ("ep", "b1"):
            assert stub.RevokeAgentToken(pb.RevokeAgentTokenRequest(agent_id=ids[name]), metadata=HOST).revoked
        assert stub.GetLadder(pb.GetLadderRequest(name="main")).tickets_waiting == 0  # the endpoint's ticket went
        assert store.get_agent(ids["ep"]).dial_token == ""  # nothing left to dial it with
        assert match_id is not None and store.finish_match(match_id, fake_record(match_id, 3))[0]  # it finishes
        assert [t.agent_id for t in store.snapshot("main", now_ms())] == [ids["b2"], ids["b3"]]  # b1 not back
        assert (
            refused(stub.JoinQueue, ep_join, auth_metadata(registered["ep"].token))[0]
            == grpc.StatusCode.UNAUTHENTICATED
        )
        with pytest.raises(Revoked, match="revoked"):  # an agent revoked after it authenticated: no ticket either
            store.join("main", ids["ep"], 60.0)
        rotated = stub.RotateAgentToken(pb.RotateAgentTokenRequest(agent_id=ids["ep"]), metadata=HOST)
        assert store.get_agent(ids["ep"]).dial_token == rotated.token  # rotating gives it back its place
        assert stub.JoinQueue(ep_join, metadata=auth_metadata(rotated.token)).queued_at_ms > 0
    store.client.close()


@pytest.mark.slow
def test_a_ladder_with_matches_in_play_may_change_its_seats(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """UpdateLadder refused this (FAILED_PRECONDITION) while a match was claimed; the claim keeps the
    match's seats and rules now, so the update applies to the tables formed after it."""
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladder = pb.Ladder(name="main", rules=CLASSIC, seats=3)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
        seated = [store.register_agent(f"b{n}", "builtin", bot="random")[0].agent_id for n in range(3)]
        for agent_id in seated:
            store.join("main", agent_id, None)
        (match_id,) = store.claim("main", [seated], now_ms())
        assert match_id is not None
        ladder.seats = 4
        assert stub.UpdateLadder(pb.UpdateLadderRequest(ladder=ladder), metadata=HOST).ladder.seats == 4
        assert len(store.get_match(match_id).seats) == 3 and store.get_match(match_id).rules_json
    store.client.close()
