"""RulesService: presets, legal actions, apply, score and referee for bot authors (stateless).

Every refusal is INVALID_ARGUMENT or FAILED_PRECONDITION naming the field; an engine error
(``OhHellError``) that no check caught first still becomes INVALID_ARGUMENT, never UNKNOWN.

The work runs on a small thread pool, never on the service's event loop: one call can replay a
history or a record of 54,000 actions (~0.3 s), and on the loop a few of them from anyone stalled
every agent's decisions on the engine. At most ``MAX_RULES_WORK`` calls run or wait for the pool,
and ``MAX_RULES_WORK_PER_CALLER`` of one caller; past that a call is RESOURCE_EXHAUSTED (each holds
its request, up to 4 MiB).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import grpc

from arena.proto.ohell.v1 import rules_service_pb2, rules_service_pb2_grpc
from arena.rpc.auth import StaticTokens, TokenStore
from arena.rpc.ratelimit import refuse, verified_caller
from arena.wire import (
    action_number,
    card_to_proto,
    decision_kind,
    enum_from_proto,
    observation_to_proto,
    phase_to_proto,
    rules_for_table,
    rules_to_proto,
)
from ohell.errors import OhHellError
from ohell.observation import observe
from ohell.presets import PRESETS
from ohell.referee import referee_text
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Scoring
from ohell.schedule import hand_sizes
from ohell.scoring import hand_score
from ohell.state import BID_BASE, Game, Phase, State

Reply = TypeVar("Reply")
MAX_HAND_SIZE = 17  # 52 cards over 3 players
MAX_HAND_NUMBER = 100_000
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
RULES_THREADS = 2
MAX_RULES_WORK = 32
MAX_RULES_WORK_PER_CALLER = 8  # so that one caller cannot keep every other one out
# A verdict quotes the value it refuses, as long as the caller made it (and escaped: up to 6
# characters per character sent): cut, it stays a line, and under the 4 MiB a response may be.
MAX_SUMMARY = 500


class RequestError(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def _invalid(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.INVALID_ARGUMENT, message)


def _check_players(num_players: int, field: str) -> None:
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise _invalid(f"{field}: {num_players} must be from {MIN_PLAYERS} to {MAX_PLAYERS}")


def _advance(state: State, rng: random.Random) -> None:
    while state.phase <= Phase.DEAL:
        state.chance_random(rng)


def replay_history(history: rules_service_pb2.GameHistory) -> tuple[State, random.Random]:
    """The state a history leads to; RequestError naming ``history.<field>`` otherwise."""
    _check_players(history.num_players, "history.num_players")
    rules = rules_for_table(history.rules, history.num_players, "history.rules")
    state = Game(rules, history.num_players).new_state()
    rng = random.Random(history.seed)
    _advance(state, rng)
    for index, action in enumerate(history.actions):
        field = f"history.actions[{index}]"
        if state.is_terminal():
            raise _invalid(f"{field}: the game is already over")
        try:
            number = action_number(action, decision_kind(state.phase), field)
            state.act(action.seat, number)
        except OhHellError as error:  # action_number's refusal names the field already
            said = str(error)
            raise _invalid(said if said.startswith(field) else f"{field}: {said}") from None
        _advance(state, rng)
    return state, rng


def score_hand(request: rules_service_pb2.ScoreHandRequest) -> int:
    """The points of one hand; RequestError naming the field that cannot be scored."""
    scoring = enum_from_proto("scoring", request.scoring, "scoring")
    if not 1 <= request.hand_size <= MAX_HAND_SIZE:
        raise _invalid(f"hand_size: {request.hand_size} must be from 1 to {MAX_HAND_SIZE}")
    for field in ("bid", "tricks"):
        if getattr(request, field) > request.hand_size:
            raise _invalid(f"{field}: {getattr(request, field)} is more than the hand_size, {request.hand_size}")
    if request.vienna and scoring is Scoring.ANDERSON:
        raise _invalid("vienna: true cannot be combined with scoring SCORING_ANDERSON")
    if request.hand_number > MAX_HAND_NUMBER:
        raise _invalid(f"hand_number: {request.hand_number} is over {MAX_HAND_NUMBER}")
    points = hand_score(
        method=scoring,
        bid=request.bid,
        tricks=request.tricks,
        cards_dealt=request.hand_size,
        hand_number=max(request.hand_number, 1),
        vienna=request.vienna,
    )
    if not INT32_MIN <= points <= INT32_MAX:  # the response's points is an int32
        raise _invalid(f"hand_number: {request.hand_number} gives points that do not fit in an int32")
    return points


def legal_actions(state: State) -> rules_service_pb2.GetLegalActionsResponse:
    response = rules_service_pb2.GetLegalActionsResponse(phase=phase_to_proto(state.phase), scores=state.scores)
    if state.is_terminal():
        return response
    seat = state.current
    response.seat = seat
    legal = state.legal_actions()
    response.kind = decision_kind(state.phase)
    if state.phase == Phase.BID:
        response.legal_bids.extend(a - BID_BASE for a in legal)
    else:
        response.legal_cards.extend(card_to_proto(a) for a in legal)
    response.observation.CopyFrom(observation_to_proto(observe(state, seat)))
    return response


def apply_action(request: rules_service_pb2.ApplyActionRequest) -> rules_service_pb2.ApplyActionResponse:
    state, rng = replay_history(request.history)
    if state.is_terminal():
        raise RequestError(grpc.StatusCode.FAILED_PRECONDITION, "the game is over: no action can be applied")
    if request.action.seat != state.current:  # a wrong argument: nothing is authorised here
        raise _invalid(f"action.seat: {request.action.seat}, but seat {state.current} is to act")
    number = action_number(request.action, decision_kind(state.phase))
    try:
        state.act(request.action.seat, number)
    except OhHellError as error:
        raise RequestError(grpc.StatusCode.FAILED_PRECONDITION, f"action: {error}") from None
    _advance(state, rng)
    history = rules_service_pb2.GameHistory()
    history.CopyFrom(request.history)
    history.actions.append(request.action)
    return rules_service_pb2.ApplyActionResponse(
        history=history, phase=phase_to_proto(state.phase), scores=state.scores, winners=state.winners
    )


class RulesApi(rules_service_pb2_grpc.RulesServiceServicer):
    def __init__(self, tokens: TokenStore | None = None) -> None:
        self.pool = ThreadPoolExecutor(RULES_THREADS, thread_name_prefix="rules-api")
        self.tokens = tokens or StaticTokens({})  # tells an agent's token from a made-up one
        self.working = 0  # calls running or waiting on the pool
        self.callers: dict[str, int] = {}  # caller -> its calls running or waiting

    async def _run(self, context: grpc.aio.ServicerContext, work: Callable[[], Reply]) -> Reply:
        # the caller first: its token's lookup awaits Redis, and the counts must be checked and taken
        # with no await between (calls checked before one of them counted would all pass)
        caller = await verified_caller(context, self.tokens)
        if self.working >= MAX_RULES_WORK:
            await refuse(context, 100, f"{MAX_RULES_WORK} rules calls are in progress on this service")
        if self.callers.get(caller, 0) >= MAX_RULES_WORK_PER_CALLER:
            await refuse(context, 100, f"{MAX_RULES_WORK_PER_CALLER} rules calls are in progress for you: wait for one")
        self.working += 1
        self.callers[caller] = self.callers.get(caller, 0) + 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, work)
        except RequestError as error:
            await context.abort(error.code, str(error))
        except OhHellError as error:  # ConversionError and any engine refusal not checked above
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        finally:
            self.working -= 1
            self.callers[caller] -= 1
            if not self.callers[caller]:
                del self.callers[caller]
        raise AssertionError("context.abort returned")  # abort always raises

    async def ListPresets(
        self, request: rules_service_pb2.ListPresetsRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.ListPresetsResponse:
        return rules_service_pb2.ListPresetsResponse(
            presets=[rules_service_pb2.Preset(name=n, rules=rules_to_proto(r)) for n, r in PRESETS.items()]
        )

    async def ResolveRules(
        self, request: rules_service_pb2.ResolveRulesRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.ResolveRulesResponse:
        def work() -> rules_service_pb2.ResolveRulesResponse:
            _check_players(request.num_players, "num_players")
            rules = rules_for_table(request.rules, request.num_players)
            return rules_service_pb2.ResolveRulesResponse(
                rules=rules_to_proto(rules), schedule=hand_sizes(rules, request.num_players)
            )

        return await self._run(context, work)

    async def GetLegalActions(
        self, request: rules_service_pb2.GetLegalActionsRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.GetLegalActionsResponse:
        return await self._run(context, lambda: legal_actions(replay_history(request.history)[0]))

    async def ApplyAction(
        self, request: rules_service_pb2.ApplyActionRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.ApplyActionResponse:
        return await self._run(context, lambda: apply_action(request))

    async def ScoreHand(
        self, request: rules_service_pb2.ScoreHandRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.ScoreHandResponse:
        return await self._run(context, lambda: rules_service_pb2.ScoreHandResponse(points=score_hand(request)))

    async def RefereeRecord(
        self, request: rules_service_pb2.RefereeRecordRequest, context: grpc.aio.ServicerContext
    ) -> rules_service_pb2.RefereeRecordResponse:
        verdict = await self._run(context, lambda: referee_text(request.record_json))
        return rules_service_pb2.RefereeRecordResponse(
            valid=verdict.valid,
            summary=_cut(verdict.summary(), MAX_SUMMARY),
            totals=verdict.totals,
            winners=verdict.winners,
            actions_checked=verdict.actions_checked,
        )


def _cut(text: str, most: int) -> str:
    """``text``, or its start and its length within ``most`` characters."""
    if len(text) <= most:
        return text
    rest = f" ... ({len(text)} characters)"
    return text[: most - len(rest)] + rest
