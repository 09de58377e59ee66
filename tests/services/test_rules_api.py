"""RulesService: what bot authors call to explore the rules."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import grpc
import pytest

from arena.play.host import host_match_sync
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import cards_pb2, match_pb2, rules_pb2, rules_service_pb2, rules_service_pb2_grpc
from arena.wire import rules_from_proto
from ohell.presets import PRESETS
from ohell.record import build_record
from ohell.rules import Rules
from ohell.state import Game, Phase
from services.engine.rules_api import MAX_RULES_WORK


@pytest.fixture(scope="module")
def rules_stub(engine_process):  # type: ignore[no-untyped-def]
    with grpc.insecure_channel(engine_process.address) as channel:
        yield rules_service_pb2_grpc.RulesServiceStub(channel)


def card_pb(index: int) -> cards_pb2.Card:
    return cards_pb2.Card(suit=index // 13 + 1, rank=index % 13 + 2)


def refusal(call, request) -> grpc.RpcError:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as refused:
        call(request, timeout=5)
    return refused.value


def history(**kwargs: object) -> rules_service_pb2.GameHistory:
    base = {"rules": rules_pb2.Rules(preset="classic", hand_sizes=[2, 1]), "num_players": 3, "seed": 4}
    return rules_service_pb2.GameHistory(**{**base, **kwargs})


def test_presets_round_trip_every_option(rules_stub) -> None:
    presets = rules_stub.ListPresets(rules_service_pb2.ListPresetsRequest(), timeout=5).presets
    assert {p.name for p in presets} == set(PRESETS)
    for item in presets:
        assert rules_from_proto(item.rules) == PRESETS[item.name]


def test_resolve_rules_gives_the_schedule_and_names_bad_fields(rules_stub) -> None:
    answer = rules_stub.ResolveRules(
        rules_service_pb2.ResolveRulesRequest(rules=rules_pb2.Rules(preset="classic"), num_players=4), timeout=5
    )
    assert list(answer.schedule) == [*range(10, 0, -1), *range(2, 11)]
    with pytest.raises(grpc.RpcError) as bad:
        rules_stub.ResolveRules(rules_service_pb2.ResolveRulesRequest(rules=rules_pb2.Rules(), num_players=9))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "num_players: 9" in bad.value.details()
    with pytest.raises(grpc.RpcError) as bad_enum:
        rules_stub.ResolveRules(rules_service_pb2.ResolveRulesRequest(rules=rules_pb2.Rules(scoring=42), num_players=4))
    assert bad_enum.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "rules.scoring: 42" in bad_enum.value.details()


def test_walk_a_whole_game_with_legal_actions_and_apply(rules_stub) -> None:
    game = history()
    steps = 0
    while True:
        legal = rules_stub.GetLegalActions(rules_service_pb2.GetLegalActionsRequest(history=game), timeout=5)
        if legal.phase == match_pb2.PHASE_GAME_OVER:
            break
        assert legal.observation.seat == legal.seat
        action = match_pb2.Action(seat=legal.seat)
        if legal.kind == match_pb2.DECISION_KIND_BID:
            action.bid = legal.legal_bids[-1]
        else:
            action.card.CopyFrom(legal.legal_cards[0])
            assert legal.observation.hand, "the seat to act sees its own cards"
        applied = rules_stub.ApplyAction(rules_service_pb2.ApplyActionRequest(history=game, action=action), timeout=5)
        game = applied.history
        steps += 1
    assert steps == 3 * 2 + 3 * 2 + 3 * 1  # 2 hands: 3 bids each, 2 + 1 cards each
    assert applied.phase == match_pb2.PHASE_GAME_OVER and len(applied.winners) >= 1


def test_apply_refuses_wrong_seat_illegal_and_garbage(rules_stub) -> None:
    legal = rules_stub.GetLegalActions(rules_service_pb2.GetLegalActionsRequest(history=history()), timeout=5)
    seat = legal.seat
    cases = [
        (
            match_pb2.Action(seat=(seat + 1) % 3, bid=0),
            grpc.StatusCode.INVALID_ARGUMENT,
            f"action.seat: {(seat + 1) % 3}, but seat {seat} is to act",
        ),
        (match_pb2.Action(seat=seat), grpc.StatusCode.INVALID_ARGUMENT, "neither bid nor card"),
        (
            match_pb2.Action(seat=seat, card=card_pb(0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "action.card: set, but the decision is a bid",
        ),
        (match_pb2.Action(seat=seat, bid=5), grpc.StatusCode.FAILED_PRECONDITION, "bids run from 0 to 2"),
    ]
    for action, code, words in cases:
        with pytest.raises(grpc.RpcError) as refused:
            rules_stub.ApplyAction(rules_service_pb2.ApplyActionRequest(history=history(), action=action), timeout=5)
        assert refused.value.code() == code and words in refused.value.details()
    bad_history = history(actions=[match_pb2.Action(seat=seat, bid=0), match_pb2.Action(seat=seat, bid=0)])
    with pytest.raises(grpc.RpcError) as replayed:
        rules_stub.GetLegalActions(rules_service_pb2.GetLegalActionsRequest(history=bad_history), timeout=5)
    assert replayed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "history.actions[1]" in replayed.value.details() and "turn" in replayed.value.details()


def test_score_hand_and_referee(rules_stub) -> None:
    score = rules_stub.ScoreHand(
        rules_service_pb2.ScoreHandRequest(
            scoring=rules_pb2.SCORING_EXACT, bid=2, tricks=2, hand_size=5, hand_number=1
        ),
        timeout=5,
    )
    assert score.points == 12
    with pytest.raises(grpc.RpcError) as bad:
        rules_stub.ScoreHand(rules_service_pb2.ScoreHandRequest(scoring=rules_pb2.SCORING_EXACT, bid=6, hand_size=5))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "bid: 6" in bad.value.details()
    with pytest.raises(grpc.RpcError) as unset:
        rules_stub.ScoreHand(rules_service_pb2.ScoreHandRequest(hand_size=5))
    assert unset.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "scoring: 0" in unset.value.details()
    record = host_match_sync("ref-1", Rules(hand_sizes=(2,)), [SeatSpec.builtin("random")] * 3, 2, spectate=False)
    verdict = rules_stub.RefereeRecord(rules_service_pb2.RefereeRecordRequest(record_json=json.dumps(record)))
    assert verdict.valid and list(verdict.totals) == record["totals"] and verdict.actions_checked == 3 + 6
    record["hands"][0]["events"][0][2] = 7  # a bid of 7 in a 2-card hand
    verdict = rules_stub.RefereeRecord(rules_service_pb2.RefereeRecordRequest(record_json=json.dumps(record)))
    assert not verdict.valid and "illegal action #0" in verdict.summary
    garbage = rules_stub.RefereeRecord(rules_service_pb2.RefereeRecordRequest(record_json="{not json"))
    assert not garbage.valid and "not JSON" in garbage.summary


def test_a_verdict_quoting_a_huge_value_is_still_one_line_sent(rules_stub) -> None:
    """The referee's verdict quotes the value it refuses; a 3.9 MB card of zero-width spaces became
    a 7.8 MB summary (each one written \\u200b), over the 4 MiB a response may be: the call failed
    RESOURCE_EXHAUSTED, where RefereeRecord promises a verdict for any record."""
    record = host_match_sync("ref-2", Rules(hand_sizes=(2,)), [SeatSpec.builtin("random")] * 3, 2, spectate=False)
    record["hands"][0]["deal"][0][0] = "\u200b" * 1_300_000
    text = json.dumps(record, ensure_ascii=False)
    assert len(text.encode()) < 4 * 1024 * 1024
    verdict = rules_stub.RefereeRecord(rules_service_pb2.RefereeRecordRequest(record_json=text), timeout=30)
    assert not verdict.valid and "hands[0].deal[0]" in verdict.summary and len(verdict.summary) <= 500


@pytest.mark.parametrize(
    ("rules", "field"),
    [
        (rules_pb2.Rules(hand_sizes=[14]), "rules.hand_sizes"),
        (rules_pb2.Rules(min_cards=17), "rules.min_cards"),
        (rules_pb2.Rules(scoring=rules_pb2.SCORING_ANDERSON, vienna=True), "rules.vienna"),
    ],
)
def test_rules_that_cannot_be_dealt_are_invalid_argument_in_every_rpc(rules_stub, rules, field) -> None:
    resolve = refusal(rules_stub.ResolveRules, rules_service_pb2.ResolveRulesRequest(rules=rules, num_players=4))
    assert resolve.code() == grpc.StatusCode.INVALID_ARGUMENT and field in resolve.details()
    game = rules_service_pb2.GameHistory(rules=rules, num_players=4, seed=1)
    legal = refusal(rules_stub.GetLegalActions, rules_service_pb2.GetLegalActionsRequest(history=game))
    assert legal.code() == grpc.StatusCode.INVALID_ARGUMENT and f"history.{field}" in legal.details()
    applied = refusal(
        rules_stub.ApplyAction,
        rules_service_pb2.ApplyActionRequest(history=game, action=match_pb2.Action(seat=1, bid=0)),
    )
    assert applied.code() == grpc.StatusCode.INVALID_ARGUMENT and f"history.{field}" in applied.details()


def test_a_history_answering_with_the_wrong_kind_is_refused(rules_stub) -> None:
    legal = rules_stub.GetLegalActions(rules_service_pb2.GetLegalActionsRequest(history=history()), timeout=5)
    wrong = history(actions=[match_pb2.Action(seat=legal.seat, card=card_pb(0))])
    refused = refusal(rules_stub.GetLegalActions, rules_service_pb2.GetLegalActionsRequest(history=wrong))
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "history.actions[0].card: set, but the decision is a bid" in refused.details()


@pytest.mark.parametrize(
    ("request_fields", "words"),
    [
        ({"scoring": rules_pb2.SCORING_ANDERSON, "vienna": True, "hand_size": 3, "hand_number": 2}, "vienna: true"),
        ({"scoring": rules_pb2.SCORING_EXACT, "hand_size": 0}, "hand_size: 0"),
        ({"scoring": rules_pb2.SCORING_EXACT, "hand_size": 18}, "hand_size: 18"),
        ({"scoring": rules_pb2.SCORING_EXACT, "hand_size": 3, "tricks": 4}, "tricks: 4"),
        ({"scoring": rules_pb2.SCORING_EXACT, "hand_size": 3, "bid": 9}, "bid: 9"),
    ],
)
def test_score_hand_refuses_what_cannot_be_scored(rules_stub, request_fields, words) -> None:
    refused = refusal(rules_stub.ScoreHand, rules_service_pb2.ScoreHandRequest(**request_fields))
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT and words in refused.details()


def test_score_hand_consolation(rules_stub) -> None:
    made = rules_stub.ScoreHand(
        rules_service_pb2.ScoreHandRequest(
            scoring=rules_pb2.SCORING_CONSOLATION, bid=2, tricks=2, hand_size=5, hand_number=1
        ),
        timeout=5,
    )
    missed = rules_stub.ScoreHand(
        rules_service_pb2.ScoreHandRequest(
            scoring=rules_pb2.SCORING_CONSOLATION, bid=2, tricks=3, hand_size=5, hand_number=1
        ),
        timeout=5,
    )
    assert (made.points, missed.points) == (10 + 2 + 2, 3)


def longest_record() -> str:
    """The JSON record of a game of 1000 hands of 17 cards for 3 players (the longest schedule
    the wire takes: 54,000 actions, ~2.5 MB), each seat playing its lowest legal action."""
    state = Game(Rules(hand_sizes=(17,) * 1000), 3).new_state()
    rng = random.Random(5)
    while not state.is_terminal():
        if state.phase <= Phase.DEAL:
            state.chance_random(rng)
        else:
            state.apply_action(min(state.legal_actions()))
    return json.dumps(build_record(state, [{"name": f"s{seat}", "kind": "builtin"} for seat in range(3)], 5, "long"))


@pytest.mark.slow  # replays of the longest record: seconds of CPU
def test_heavy_rules_calls_do_not_stall_the_service(engine_process) -> None:
    """Each RefereeRecord of the longest record replays 54,000 actions (~0.3 s of CPU): run on the
    service's event loop, a few of them from anyone stalled every other call and every agent's
    decisions on that engine for seconds. Measured in calls, not seconds: the 8 replays share 2 rules
    threads (~1 s of CPU before the first ends), and 5 ListPresets sent after them are all answered
    before any replay ends; run on the loop, a ListPresets would wait for the replays ahead of it."""
    record = longest_record()
    with grpc.insecure_channel(engine_process.address, options=[("grpc.max_send_message_length", 8 << 20)]) as channel:
        stub = rules_service_pb2_grpc.RulesServiceStub(channel)
        request = rules_service_pb2.RefereeRecordRequest(record_json=record)
        assert stub.RefereeRecord(request, timeout=30).valid
        heavy = [stub.RefereeRecord.future(request, timeout=60) for _ in range(8)]
        for _ in range(5):
            assert stub.ListPresets(rules_service_pb2.ListPresetsRequest(), timeout=30).presets
        replays_done = sum(call.done() for call in heavy)
        assert all(call.result().valid for call in heavy)
    assert replays_done == 0, f"{replays_done} replays ended before 5 ListPresets were answered: they waited behind"


@pytest.mark.slow  # replays of the longest record: seconds of CPU
def test_rules_calls_past_the_pool_are_refused_resource_exhausted(engine_process) -> None:
    """The heavy calls wait for the rules threads, each holding its request: past
    ``MAX_RULES_WORK`` of them a call is refused at once instead of piling up in memory."""
    request = rules_service_pb2.RefereeRecordRequest(record_json=longest_record())
    with grpc.insecure_channel(engine_process.address, options=[("grpc.max_send_message_length", 8 << 20)]) as channel:
        stub = rules_service_pb2_grpc.RulesServiceStub(channel)
        calls = [stub.RefereeRecord.future(request, timeout=60) for _ in range(MAX_RULES_WORK + 8)]
        refused = [call.exception() for call in calls if call.exception() is not None]
    assert refused, "every call waited for the rules threads"
    assert all(error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for error in refused), refused[0]
    assert "rules calls are in progress" in refused[0].details()


class Refused(Exception):
    """What ``Context.abort`` raises."""


class Context:
    """The parts of a gRPC servicer context ``RulesApi._run`` reads: a caller at ``peer`` with ``token``."""

    def __init__(self, peer: str, token: str = "") -> None:
        from arena.rpc.auth import auth_metadata

        self._peer, self._metadata = peer, auth_metadata(token) if token else ()

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(self, code: grpc.StatusCode, details: str, trailing_metadata: object = ()) -> None:
        raise Refused(code, details)


async def held_call(api: Any, context: Context, release: threading.Event) -> object:
    """``api._run`` of work that waits for ``release``: "done", or the refusal's (code, details)."""

    def blocked() -> str:
        release.wait(30)
        return "done"

    try:
        return await api._run(context, blocked)  # type: ignore[no-any-return]
    except Refused as refused:
        return refused.args


def test_one_caller_holds_a_share_of_the_rules_work() -> None:
    """``MAX_RULES_WORK`` calls may run or wait in all; one caller kept them all busy (a few heavy
    calls a second from an anonymous caller are enough), and every other caller was refused
    RESOURCE_EXHAUSTED for as long as it liked. A caller now holds at most
    ``MAX_RULES_WORK_PER_CALLER`` of them."""
    import asyncio

    from arena.rpc.auth import StaticTokens
    from services.engine.rules_api import MAX_RULES_WORK_PER_CALLER, RulesApi

    release = threading.Event()

    async def run() -> None:
        api = RulesApi(StaticTokens({"agent-token-of-b-0123": "a2"}))

        async def call(context: Context) -> object:
            return await held_call(api, context, release)

        a = Context("ipv4:192.0.2.1:5000")
        held = [asyncio.create_task(call(a)) for _ in range(MAX_RULES_WORK_PER_CALLER)]
        await asyncio.sleep(0)
        code, details = await asyncio.wait_for(call(a), 10)  # type: ignore[misc]  # refused at once, not queued
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "rules calls are in progress" in details
        made_up = Context("ipv4:192.0.2.1:5001", "made-up-token-0123456789")  # no new caller
        assert (await asyncio.wait_for(call(made_up), 10))[0] == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[index]
        others = [
            asyncio.create_task(call(Context("ipv4:192.0.2.2:5000"))),
            asyncio.create_task(call(Context("ipv4:192.0.2.1:5002", "agent-token-of-b-0123"))),
        ]
        await asyncio.sleep(0)
        release.set()
        assert await asyncio.gather(*held, *others) == ["done"] * (MAX_RULES_WORK_PER_CALLER + 2)
        assert api.working == 0 and not api.callers

    try:
        asyncio.run(run())
    finally:
        release.set()


def test_calls_arriving_together_cannot_pass_the_bound_on_all_rules_work() -> None:
    """``MAX_RULES_WORK`` was checked before the caller's token was looked up (an await on Redis)
    and counted after it: calls sent together from a few callers all passed the check before any
    counted, so more than ``MAX_RULES_WORK`` requests (of up to 4 MiB each) ran or waited."""
    import asyncio

    from services.engine.rules_api import MAX_RULES_WORK, MAX_RULES_WORK_PER_CALLER, RulesApi

    class RedisLikeTokens:  # a lookup that awaits, as the Redis token store's does
        async def agent_for_token(self, token: str) -> str | None:
            await asyncio.sleep(0)
            return None

    release = threading.Event()
    callers = MAX_RULES_WORK // MAX_RULES_WORK_PER_CALLER + 2

    async def run() -> None:
        api = RulesApi(RedisLikeTokens())

        async def call(context: Context) -> object:
            return await held_call(api, context, release)

        contexts = [Context(f"ipv4:192.0.2.{n}:5000", "made-up-token-0123456789") for n in range(1, callers + 1)]
        calls = [asyncio.create_task(call(c)) for c in contexts for _ in range(MAX_RULES_WORK_PER_CALLER)]
        for _ in range(5):  # every call through its token lookup
            await asyncio.sleep(0)
        assert api.working == MAX_RULES_WORK
        release.set()
        answers = await asyncio.gather(*calls)
        assert answers.count("done") == MAX_RULES_WORK, answers

    try:
        asyncio.run(run())
    finally:
        release.set()
