"""convert.py: engine values <-> messages (pure logic, no server)."""

from __future__ import annotations

import random

import pytest

from arena.proto.ohell.v1 import cards_pb2, gateway_pb2, match_pb2, relay_pb2, rules_pb2
from arena.sdk.reading import ObservationReader, legal_actions_of, observation_from_proto
from arena.wire import (
    ConversionError,
    DecisionWriter,
    ObservationWriter,
    action_number,
    add_legal_cards,
    message_bytes,
    observation_to_proto,
    rules_for_table,
    rules_from_proto,
    rules_to_proto,
    wrapped,
)
from ohell.observation import observe
from ohell.presets import PRESETS
from ohell.rules import Rules, Scoring
from ohell.state import BID_BASE, Game, Phase, Trick

BID, PLAY = match_pb2.DECISION_KIND_BID, match_pb2.DECISION_KIND_PLAY


def test_every_scoring_method_round_trips_consolation_included() -> None:
    for method in Scoring:
        message = rules_to_proto(Rules(scoring=method))
        assert rules_from_proto(message).scoring is method
    assert rules_to_proto(Rules(scoring=Scoring.CONSOLATION)).scoring == rules_pb2.SCORING_CONSOLATION


def test_an_answer_of_the_wrong_kind_is_garbage() -> None:
    bid = match_pb2.Action(bid=1)
    card = match_pb2.Action(card=cards_pb2.Card(suit=4, rank=14))
    assert action_number(bid, BID) == BID_BASE + 1 and action_number(card, PLAY) == 51
    with pytest.raises(ConversionError, match=r"action.bid: set, but the decision is a play"):
        action_number(bid, PLAY)
    with pytest.raises(ConversionError, match=r"action.card: set, but the decision is a bid"):
        action_number(card, BID)


def test_to_act_is_unset_when_no_decision_is_pending() -> None:
    state = Game(Rules(hand_sizes=(1,)), 3).new_state()
    while not state.is_terminal():
        if state.is_chance():
            state.chance_random(random.Random(3))
        else:
            state.apply_action(state.default_action())
    over = observation_to_proto(observe(state, 0))
    assert not over.HasField("to_act")
    assert observation_from_proto(over, state.rules).to_act == -1
    playing = Game(Rules(hand_sizes=(1,)), 3).new_state()
    playing.chance_random(random.Random(3))
    while playing.is_chance():
        playing.chance_random(random.Random(3))
    message = observation_to_proto(observe(playing, 1))
    assert message.HasField("to_act") and message.to_act == playing.current
    assert observation_from_proto(message, playing.rules).to_act == playing.current


def test_an_unspecified_phase_is_refused() -> None:
    with pytest.raises(ConversionError, match=r"observation.phase: 0"):
        seats = [0, 0, 0]
        observation_from_proto(
            match_pb2.Observation(num_players=3, bids=seats, tricks_won=seats, scores=seats), Rules()
        )


@pytest.mark.parametrize(
    ("message", "players", "field"),
    [
        (rules_pb2.Rules(hand_sizes=[14]), 4, "rules.hand_sizes"),
        (rules_pb2.Rules(min_cards=17), 4, "rules.min_cards"),
        (rules_pb2.Rules(hand_sizes=[17]), 3, None),
    ],
)
def test_rules_for_table_checks_the_schedule(message, players, field) -> None:
    if field is None:
        assert rules_for_table(message, players).hand_sizes == (17,)
        return
    with pytest.raises(ConversionError, match=field):
        rules_for_table(message, players)


@pytest.mark.parametrize("preset_name", ["classic", "river-blind", "river-sudden-death", "online-anderson"])
def test_cached_observation_writer_gives_the_same_bytes_and_the_sdk_the_same_observation(preset_name: str) -> None:
    rules = PRESETS[preset_name]
    for players, seed in ((3, 1), (5, 2)):
        state, rng = Game(rules, players).new_state(), random.Random(seed)
        writer = ObservationWriter()
        known: dict[int, tuple[int, tuple[Trick, ...]]] = {}
        readers = {seat: ObservationReader(rules) for seat in range(players)}  # the SDK's: one per match and seat
        checked = 0
        while state.phase != Phase.GAME_OVER:
            if state.phase <= Phase.DEAL:
                state.chance_random(rng)
                continue
            for seat in {state.current, (state.current + 1) % players}:
                observation = observe(state, seat)
                written = match_pb2.Observation()
                writer.write(observation, 77, written)
                direct = observation_to_proto(observation, 77)
                assert written.SerializeToString(deterministic=True) == direct.SerializeToString(deterministic=True)
                hand_number, tricks = known.get(seat, (0, ()))
                decoded = observation_from_proto(
                    written, rules, observation.legal_actions, tricks if hand_number == observation.hand_number else ()
                )
                known[seat] = (observation.hand_number, decoded.tricks)
                assert decoded == observation  # every field, the finished tricks decoded earlier included
                read = readers[seat].read(written, observation.legal_actions)
                assert read == observation and vars(read) == vars(observation)
                checked += 1
            state.apply_action(rng.choice(state.legal_actions()))
        assert checked > 50


@pytest.mark.parametrize("preset_name", ["classic", "river-sudden-death", "online-anderson"])
def test_decision_writer_gives_the_bytes_of_the_event_the_host_built(preset_name: str) -> None:
    """The host sends each decision as ``DecisionWriter.encode``'s bytes (no message kept): they must be
    protobuf's for the AgentEvent it built before, for every kind (a bid change with its forbidden bid)."""
    rules = PRESETS[preset_name]
    state, rng = Game(rules, 4).new_state(), random.Random(6)
    writer, decision_id = DecisionWriter("match-1"), 0
    while state.phase != Phase.GAME_OVER:
        if state.phase <= Phase.DEAL:
            state.chance_random(rng)
            continue
        seat, legal = state.current, state.legal_actions()
        kinds = [BID, match_pb2.DECISION_KIND_CHANGE_BID] if state.phase == Phase.BID else [PLAY]
        for kind in kinds:
            decision_id += 99
            forbidden = 2 if kind == match_pb2.DECISION_KIND_CHANGE_BID else None
            event = match_pb2.AgentEvent()
            request = event.decision
            request.match_id, request.seat, request.decision_id, request.kind = "match-1", seat, decision_id, kind
            observation_to_proto(observe(state, seat), 1234, out=request.observation)
            request.deadline_ms = 5000
            if kind == PLAY:
                add_legal_cards(request, legal)
            else:
                request.legal_bids.extend([a - BID_BASE for a in legal])
            if forbidden is not None:
                request.observation.forbidden_bid = forbidden
            encoded = writer.encode(seat, decision_id, kind, observe(state, seat), 1234, legal, 5000, forbidden)
            assert encoded == event.SerializeToString()
        state.apply_action(rng.choice(legal))
    assert decision_id > 99 * 50


def test_observation_reader_makes_frozen_observations() -> None:
    state, rng = Game(Rules(), 4).new_state(), random.Random(4)
    while state.phase != Phase.PLAY:
        state.chance_random(rng) if state.is_chance() else state.apply_action(state.legal_actions()[0])
    seen = observe(state, state.current)
    read = ObservationReader(Rules()).read(observation_to_proto(seen), seen.legal_actions)
    with pytest.raises(AttributeError):
        read.seat = 1  # type: ignore[misc]
    assert hash(read) == hash(seen) and read.legal_bids == () and read.legal_actions == state.legal_actions()


def test_wrapped_bytes_are_what_protobuf_writes_for_the_wrapper() -> None:
    """The gateway and the SDK frame ConnectResponse/ConnectRequest themselves: the bytes must
    equal protobuf's for every size of the inner message (varint lengths of 1, 2 and 3 bytes)."""
    state = Game(Rules(), 4).new_state()
    rng = random.Random(5)
    events = [match_pb2.AgentEvent(), match_pb2.AgentEvent(notice=match_pb2.Notice(code="X", message="y" * 20000))]
    while state.phase != Phase.GAME_OVER and len(events) < 60:
        if state.is_chance():
            state.chance_random(rng)
            continue
        event = match_pb2.AgentEvent()
        observation_to_proto(observe(state, state.current), 1000, out=event.decision.observation)
        events.append(event)
        state.apply_action(rng.choice(state.legal_actions()))
    sizes = set()
    for event in events:
        data = wrapped(event.SerializeToString())
        assert data == gateway_pb2.ConnectResponse(event=event).SerializeToString()
        assert gateway_pb2.ConnectResponse.FromString(data).event == event
        sizes.add(len(data) - len(event.SerializeToString()))
        head = relay_pb2.RelayEnvelope(agent_id="a", reply_channel="ohell:host:1").SerializeToString()
        relayed = relay_pb2.RelayEnvelope(agent_id="a", reply_channel="ohell:host:1", to_agent=event)
        assert head + wrapped(event.SerializeToString(), 3) == relayed.SerializeToString()
    assert sizes == {2, 3, 4}  # tag byte + a 1-, 2- and 3-byte length
    action = match_pb2.Action(
        match_id="m", seat=2, decision_id=300, card=cards_pb2.Card(suit=cards_pb2.SUIT_CLUBS, rank=cards_pb2.RANK_ACE)
    )
    request = gateway_pb2.ConnectRequest(action=action)
    assert wrapped(action.SerializeToString()) == request.SerializeToString()
    assert message_bytes(request) == message_bytes(request.SerializeToString()) == request.SerializeToString()
    with pytest.raises(ValueError, match="field=0"):
        wrapped(b"", 0)
    big = wrapped(b"", 16)  # a two-byte tag
    assert big == bytes([0x82, 0x01, 0x00])


def test_legal_cards_and_hands_from_pre_encoded_bytes_equal_card_by_card_copies() -> None:
    rng = random.Random(11)
    for _ in range(200):
        cards = sorted(rng.sample(range(52), rng.randint(0, 13)))
        request = match_pb2.DecisionRequest(decision_id=7, kind=PLAY)
        add_legal_cards(request, cards)
        copied = match_pb2.DecisionRequest(decision_id=7, kind=PLAY)
        copied.legal_cards.extend([cards_pb2.Card(suit=c // 13 + 1, rank=c % 13 + 2) for c in cards])  # type: ignore[arg-type]
        assert request.SerializeToString() == copied.SerializeToString()
        assert legal_actions_of(request) == tuple(cards)


@pytest.mark.parametrize("field", ["bids", "tricks_won", "scores"])
@pytest.mark.parametrize("count", [0, 3, 5000])
def test_per_seat_lists_of_another_length_are_refused(field: str, count: int) -> None:
    """A hostile or broken server could send thousands of bids: one value a seat, or the observation
    never reaches the bot (through both readers, on a later decision of the hand too)."""
    state, rng = Game(Rules(), 4).new_state(), random.Random(8)
    while state.phase != Phase.PLAY:
        state.chance_random(rng) if state.is_chance() else state.apply_action(state.legal_actions()[0])
    seen = observe(state, state.current)
    good = observation_to_proto(seen)
    reader = ObservationReader(Rules())
    assert reader.read(good, seen.legal_actions) == observation_from_proto(good, Rules(), seen.legal_actions)
    bad = match_pb2.Observation()
    bad.CopyFrom(good)
    getattr(bad, field)[:] = [0] * count
    pattern = rf"observation.{field}: {count} values, not one for each of 4 seats"
    with pytest.raises(ConversionError, match=pattern):
        observation_from_proto(bad, Rules(), seen.legal_actions)
    if field != "scores":  # scores are read once a hand (they do not change in it): the reader keeps the hand's
        with pytest.raises(ConversionError, match=pattern):
            reader.read(bad, seen.legal_actions)  # the hand's table was read already
    with pytest.raises(ConversionError, match=pattern):
        ObservationReader(Rules()).read(bad, seen.legal_actions)
