"""Class 2: faulty agents (fuzzed: illegal cards they hold, cards they do not hold, impossible
bids, unreadable actions) in real matches on a real engine service. No event, error or spectate
message that reaches another seat or a spectator names a card; the offending seat and the
finished record keep the full detail."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import register_agent_token
from arena.proto.ohell.v1 import (
    challenge_pb2,
    challenge_pb2_grpc,
    match_pb2,
    rules_pb2,
    spectate_pb2,
    spectate_pb2_grpc,
)
from arena.rpc.auth import auth_metadata

from .agents import Agent, first_legal, legal
from .conftest import HOST_TOKEN, Service

pytestmark = pytest.mark.slow

CARD_NAME = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[CDHS](?![A-Za-z0-9])")


def fuzzed(rng: random.Random) -> Callable[[Agent, match_pb2.DecisionRequest], object]:
    sent: set[str] = set()  # the first bid is out of range and the first play is garbage, so both kinds occur

    async def policy(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        action = first_legal(request)
        move = rng.random()
        first = "play" if request.kind == match_pb2.DECISION_KIND_PLAY else "bid"
        if first not in sent:
            sent.add(first)
            move = 0.55 if first == "play" else 0.0  # play: neither bid nor card; bid: 99
        if request.kind == match_pb2.DECISION_KIND_PLAY:
            held = list(request.observation.hand)
            illegal = [c for c in held if c not in request.legal_cards]
            if move < 0.35 and illegal:
                action.card.CopyFrom(rng.choice(illegal))  # a card it holds, against the rules
            elif move < 0.5:
                action.card.suit, action.card.rank = rng.randint(1, 4), rng.randint(2, 14)  # maybe not held
            elif move < 0.6:
                action.ClearField("card")  # neither bid nor card
        elif move < 0.4:
            action.bid = 99
        return action

    return policy


def details_seen(events: list[match_pb2.AgentEvent], seat: int) -> list[str]:
    """Fault details and notices an agent in ``seat`` received about *other* seats."""
    seen = []
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "match_ended":
            seen += [f.detail for f in event.match_ended.faults if f.seat != seat]
    return seen


def test_no_hidden_card_reaches_other_seats_or_spectators(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    for seat in range(4):
        register_agent_token(client, f"p{seat}", f"p{seat}-token-0123456789")

    async def spectate(match_id: str, sink: list[object]) -> None:
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = spectate_pb2_grpc.SpectateServiceStub(channel)
            async for response in stub.Spectate(spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=20_000)):
                sink.append(response.event)

    async def run() -> list[tuple[dict, list[Agent], list[object]]]:
        rng = random.Random(20261130)
        played = []
        for number in range(3):
            policies = [fuzzed(rng), fuzzed(rng), None, None]
            agents = [
                await Agent(engine.address, f"p{seat}-token-0123456789", policies[seat] or legal).start()
                for seat in range(4)
            ]
            match_id = f"fuzz.{number}"
            spectated: list[object] = []
            watcher = asyncio.create_task(spectate(match_id, spectated))
            async with grpc.aio.insecure_channel(engine.address) as channel:
                stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
                response = await stub.Challenge(
                    challenge_pb2.ChallengeRequest(
                        match_id=match_id,
                        rules=rules_pb2.Rules(hand_sizes=[6, 5]),
                        seats=[challenge_pb2.ChallengeSeat(agent_id=f"p{seat}") for seat in range(4)],
                        time_control=match_pb2.TimeControl(decision_ms=2000, max_faults=1000),
                    ),
                    metadata=auth_metadata(HOST_TOKEN),
                    timeout=60,
                )
            await asyncio.wait_for(watcher, 20)
            for agent in agents:  # the last MatchEnded reached every stream
                await agent.until(lambda agent, match_id=match_id: agent.sent("match_ended", match_id), "MatchEnded")
            for agent in agents:
                await agent.stop()
            played.append((json.loads(response.record.json), agents, spectated))
        return played

    played = asyncio.run(run())
    client.close()
    full_details_name_cards = 0
    for record, agents, spectated in played:
        kinds = {fault["kind"] for fault in record["faults"]}
        assert {"ILLEGAL", "GARBAGE"} <= kinds, kinds  # the fuzz did produce faults of both kinds
        full_details_name_cards += sum(bool(CARD_NAME.search(f["detail"])) for f in record["faults"])
        for seat, agent in enumerate(agents):
            for detail in details_seen(agent.events, seat):
                assert not CARD_NAME.search(detail), f"seat {seat} was told {detail!r}"
            own = [
                f
                for e in agent.events
                if e.WhichOneof("event") == "match_ended"
                for f in e.match_ended.faults
                if f.seat == seat
            ]
            assert [f.detail for f in own] == [f["detail"] for f in record["faults"] if f["seat"] == seat]
        spectated_faults = [e.fault for e in spectated if e.WhichOneof("event") == "fault"]
        assert len(spectated_faults) == len(record["faults"])
        ended = [f for e in spectated if e.WhichOneof("event") == "match_ended" for f in e.match_ended.faults]
        assert len(ended) == len(record["faults"])
        for fault in spectated_faults + ended:
            assert not CARD_NAME.search(fault.detail), f"a spectator was told {fault.detail!r}"
    assert full_details_name_cards > 0  # the full details (offender, record) do name cards
