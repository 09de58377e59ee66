"""No observation and no spectator event ever carries a card before it is public."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from svc_helpers import ScriptedAgent

from arena.proto.ohell.v1 import cards_pb2, match_pb2, spectate_pb2, spectate_pb2_grpc
from arena.services.engine.host import host_match
from arena.services.engine.specs import SeatSpec, TimeControl
from ohell.cards import parse_card
from ohell.presets import preset


def cards_in(message: Message) -> list[int]:
    """Every Card anywhere inside ``message``, as engine indexes."""
    found: list[int] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        values = value if field.is_repeated else [value]
        for item in values:
            if isinstance(item, cards_pb2.Card):
                found.append((item.suit - 1) * 13 + item.rank - 2)
            else:
                found.extend(cards_in(item))
    return found


def plays_of(hand: dict) -> list[tuple[int, int]]:
    return [(seat, parse_card(value)) for kind, seat, value in hand["events"] if kind == "play"]


def check_agent(seat: int, agent: ScriptedAgent, record: dict, blind: bool) -> int:
    checked = 0
    for event in agent.events:
        if event.WhichOneof("event") != "decision":
            assert cards_in(event) == [], f"{event.WhichOneof('event')} must carry no card"
            continue
        request = event.decision
        obs = request.observation
        hand = record["hands"][obs.hand_number - 1]
        dealt = {parse_card(c) for c in hand["deal"][seat]}
        trump = parse_card(hand["trump"]) if hand["trump"] else None
        seen_plays = [*[c for t in obs.tricks for c in cards_in(t)], *cards_in(obs.current_trick)]
        played = plays_of(hand)[: len(seen_plays)]
        assert seen_plays == [card for _, card in played], "tricks shown must be exactly the plays so far"
        public = {card for _, card in played} | ({trump} if trump is not None else set())
        assert set(cards_in(request)) <= dealt | public, f"seat {seat} saw a hidden card"
        sealed = blind and request.kind == match_pb2.DECISION_KIND_BID
        if sealed:
            assert not obs.hand and not obs.HasField("trump_card")
            assert all(b == -1 for s, b in enumerate(obs.bids) if s != seat)
        else:
            mine_played = {card for who, card in played if who == seat}
            assert set(cards_in(obs)) >= dealt - mine_played
            assert {(c.suit - 1) * 13 + c.rank - 2 for c in obs.hand} == dealt - mine_played
        checked += 1
    return checked


def check_spectator(events: list[spectate_pb2.MatchEvent], record: dict) -> None:
    public: set[int] = set()
    hand_index = -1
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "hand_started":
            hand_index += 1
            hand = record["hands"][hand_index]
            public = {parse_card(hand["trump"])} if hand["trump"] else set()
            assert set(cards_in(event)) == public
            continue
        if kind == "card_played":
            public.add((event.card_played.card.suit - 1) * 13 + event.card_played.card.rank - 2)
        assert set(cards_in(event)) <= public, f"spectator saw a card before it was public in {kind}"
    assert hand_index + 1 == len(record["hands"])


@pytest.mark.parametrize("preset_name", ["classic", "classic-simultaneous"])
def test_no_hidden_card_reaches_an_agent_or_a_spectator(
    preset_name, engine_process, make_agent, shared_redis_server
) -> None:
    ids_tokens = [make_agent(f"watcher{seat}") for seat in range(4)]
    rules = replace(preset(preset_name), hand_sizes=(10, 4, 1))
    match_id = f"leak-{preset_name}"

    async def run() -> tuple[dict, list[ScriptedAgent], list[spectate_pb2.MatchEvent]]:
        agents = [await ScriptedAgent(engine_process.address, token).start() for _, token in ids_tokens]
        seen: list[spectate_pb2.MatchEvent] = []

        async def watch() -> None:
            async with grpc.aio.insecure_channel(engine_process.address) as channel:
                request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=5000)
                async for response in spectate_pb2_grpc.SpectateServiceStub(channel).Spectate(request):
                    seen.append(response.event)

        watcher = asyncio.create_task(watch())
        seats = [SeatSpec.connected(agent_id) for agent_id, _ in ids_tokens]
        record = await host_match(match_id, rules, seats, 21, time_control=TimeControl(decision_ms=3000),
                                  redis_url=shared_redis_server.url)
        for agent in agents:
            await asyncio.wait_for(agent.ended.wait(), 5)
            await agent.stop()
        await asyncio.wait_for(watcher, 5)
        return record, agents, seen

    record, agents, seen = asyncio.run(run())
    assert record["faults"] == [] and record["complete"]
    checked = sum(check_agent(seat, agent, record, preset_name.endswith("simultaneous"))
                  for seat, agent in enumerate(agents))
    assert checked == 4 * 3 + 4 * 15  # every bid and every play was checked
    check_spectator(seen, record)
    kinds = [event.WhichOneof("event") for event in seen]
    assert kinds.count("card_played") == 4 * 15 and kinds.count("bid_made") >= 12


def test_checker_catches_a_leak() -> None:
    """The checker itself fails on an observation showing another seat's card."""
    request = match_pb2.DecisionRequest(kind=match_pb2.DECISION_KIND_PLAY)
    request.observation.hand_number = 1
    request.observation.hand.add(suit=1, rank=2)  # 2C: seat 0's
    request.legal_cards.add(suit=4, rank=14)  # AS: seat 1's, never played
    agent: Any = type("A", (), {"events": [match_pb2.AgentEvent(decision=request)]})()
    record = {"hands": [{"deal": [["2C"], ["AS"], ["3D"]], "trump": None, "events": []}]}
    with pytest.raises(AssertionError, match="hidden card"):
        check_agent(0, agent, record, blind=False)
