"""No observation and no spectator event ever carries a card before it is public."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from svc_helpers import ScriptedAgent, first_legal, legal_policy

from arena.play.events import PublicFeed
from arena.play.host import host_match
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import cards_pb2, match_pb2, spectate_pb2, spectate_pb2_grpc
from ohell.cards import parse_card
from ohell.observation import observe
from ohell.presets import preset
from ohell.state import BID_BASE, Game


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


def first_round_bids(hand: dict) -> list[int]:
    bids = [-1] * len(hand["deal"])
    for kind, seat, value in hand["events"]:
        if kind == "bid":
            bids[seat] = value
    return bids


def check_agent(seat: int, agent: ScriptedAgent, record: dict, blind: bool) -> int:
    checked = 0
    bids_asked: dict[int, int] = {}  # hand number -> bid decisions so far (the 2nd is the hook rebid)
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
            rebid = bids_asked.get(obs.hand_number, 0) == 1
            bids_asked[obs.hand_number] = bids_asked.get(obs.hand_number, 0) + 1
            assert not obs.hand, "own cards stay unseen while bidding blind, during the rebid too"
            assert obs.HasField("trump_card") == (trump is not None), "the trump is face up before the bids"
            if trump is not None:
                assert (obs.trump_card.suit - 1) * 13 + obs.trump_card.rank - 2 == trump
            if rebid:
                assert seat == obs.dealer and list(obs.bids) == first_round_bids(hand), "the reveal shows every bid"
            else:
                assert all(b == -1 for s, b in enumerate(obs.bids) if s != seat), "another seat's sealed bid"
        else:
            mine_played = {card for who, card in played if who == seat}
            assert set(cards_in(obs)) >= dealt - mine_played
            assert {(c.suit - 1) * 13 + c.rank - 2 for c in obs.hand} == dealt - mine_played
        checked += 1
    return checked


def check_spectator(events: list[spectate_pb2.MatchEvent], record: dict, blind: bool) -> None:
    public: set[int] = set()
    hand_index = -1
    bids_seen: list[tuple[str, int]] = []
    plays = 0
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "hand_started":
            hand_index += 1
            hand = record["hands"][hand_index]
            public = {parse_card(hand["trump"])} if hand["trump"] else set()
            assert set(cards_in(event)) == public, "the trump, and only it, is shown at the deal"
            bids_seen, plays = [], 0
            continue
        if kind == "bid_made":
            bids_seen.append((event.bid_made.how, event.bid_made.seat))
        if kind == "card_played":
            public.add((event.card_played.card.suit - 1) * 13 + event.card_played.card.rank - 2)
            plays += 1
            if blind and plays == 1:  # the first card of a blind hand: the sealed bids came out together
                participants = len(record["hands"][hand_index]["deal"])
                assert [how for how, _ in bids_seen[:participants]] == ["bid"] * participants
                assert {seat for _, seat in bids_seen[:participants]} == set(range(participants))
        assert set(cards_in(event)) <= public, f"spectator saw a card before it was public in {kind}"
    assert hand_index + 1 == len(record["hands"])


async def hook_forcing(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
    """Blind bids that total the tricks (others 0, the dealer all), so the dealer must rebid."""
    obs = request.observation
    if request.kind != match_pb2.DECISION_KIND_BID:
        return first_legal(request)
    action = first_legal(request)
    if obs.seat == obs.dealer and any(b == -1 for b in obs.bids):  # the sealed round, not the rebid
        action.bid = obs.hand_size
    return action


@pytest.mark.parametrize("preset_name", ["classic", "classic-simultaneous"])
def test_no_hidden_card_reaches_an_agent_or_a_spectator(
    preset_name, engine_process, make_agent, shared_redis_server
) -> None:
    ids_tokens = [make_agent(f"watcher{seat}") for seat in range(4)]
    rules = replace(preset(preset_name), hand_sizes=(10, 4, 1))
    match_id = f"leak-{preset_name}"
    blind = preset_name.endswith("simultaneous")

    async def run() -> tuple[dict, list[ScriptedAgent], list[spectate_pb2.MatchEvent]]:
        policy = hook_forcing if blind else legal_policy
        agents = [await ScriptedAgent(engine_process.address, token, policy).start() for _, token in ids_tokens]
        seen: list[spectate_pb2.MatchEvent] = []

        async def watch() -> None:
            async with grpc.aio.insecure_channel(engine_process.address) as channel:
                request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=5000)
                async for response in spectate_pb2_grpc.SpectateServiceStub(channel).Spectate(request):
                    seen.append(response.event)

        watcher = asyncio.create_task(watch())
        seats = [SeatSpec.connected(agent_id) for agent_id, _ in ids_tokens]
        record = await host_match(
            match_id, rules, seats, 21, time_control=TimeControl(decision_ms=3000), redis_url=shared_redis_server.url
        )
        for agent in agents:
            await asyncio.wait_for(agent.ended.wait(), 5)
            await agent.stop()
        await asyncio.wait_for(watcher, 5)
        return record, agents, seen

    record, agents, seen = asyncio.run(run())
    assert record["faults"] == [] and record["complete"]
    rebids = [event for hand in record["hands"] for event in hand["events"] if event[0] == "rebid"]
    assert len(rebids) == (3 if blind else 0)  # blind: every hand reached the dealer's hook rebid
    checked = sum(check_agent(seat, agent, record, blind) for seat, agent in enumerate(agents))
    assert checked == 4 * 3 + len(rebids) + 4 * 15  # every bid, rebid and play was checked
    check_spectator(seen, record, blind)
    kinds = [event.WhichOneof("event") for event in seen]
    assert kinds.count("card_played") == 4 * 15 and kinds.count("bid_made") == 12 + len(rebids)


def test_public_feed_shows_the_trump_at_once_and_blind_bids_only_at_the_reveal() -> None:
    state = Game(replace(preset("classic-simultaneous"), hand_sizes=(3,)), 4).new_state()
    feed = PublicFeed("feed-1")
    rng = random.Random(8)
    while state.is_chance():
        state.chance_random(rng)
    events = feed.step(state)
    assert [e.WhichOneof("event") for e in events] == ["hand_started"]
    assert cards_in(events[0]) == [state.trump_card], "the trump is public from the deal"
    for seat in state.order[:-1]:  # sealed bids: nothing public happens
        state.act(seat, BID_BASE)
        assert feed.step(state) == [], "a sealed bid went out before the reveal"
    state.act(state.dealer, BID_BASE + 3)  # the bids total the tricks: the dealer must rebid
    assert state.rebid
    revealed = feed.step(state)
    assert [(e.bid_made.seat, e.bid_made.bid) for e in revealed] == [
        (s, 3 if s == state.dealer else 0) for s in state.order
    ]
    observed = observe(state, state.dealer)
    assert observed.hand == (), "the dealer rebids without seeing its cards"
    assert observed.bids == tuple(3 if s == state.dealer else 0 for s in range(4)), "the reveal shows every bid"
    assert observed.trump_card == state.trump_card
    state.act(state.dealer, BID_BASE + 1)
    assert [e.bid_made.how for e in feed.step(state)] == ["rebid"]


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
