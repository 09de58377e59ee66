"""RulesService: presets, legal actions, apply, score and referee for bot authors (stateless)."""

from __future__ import annotations

import random

import grpc

from arena.proto.ohell.v1 import match_pb2, rules_service_pb2, rules_service_pb2_grpc
from arena.services.engine.convert import (
    ConversionError,
    action_number,
    card_to_proto,
    enum_from_proto,
    observation_to_proto,
    phase_to_proto,
    rules_from_proto,
    rules_to_proto,
)
from ohell.errors import OhHellError
from ohell.observation import observe
from ohell.presets import PRESETS
from ohell.referee import referee_text
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS
from ohell.schedule import hand_sizes
from ohell.scoring import hand_score
from ohell.state import BID_BASE, Game, Phase, State


class RequestError(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_players(num_players: int, field: str) -> None:
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise RequestError(grpc.StatusCode.INVALID_ARGUMENT,
                           f"{field}={num_players} must be from {MIN_PLAYERS} to {MAX_PLAYERS}")


def _advance(state: State, rng: random.Random) -> None:
    while state.phase <= Phase.DEAL:
        state.chance_random(rng)


def replay_history(history: rules_service_pb2.GameHistory) -> tuple[State, random.Random]:
    """The state a history leads to; RequestError naming ``history.<field>`` otherwise."""
    _check_players(history.num_players, "history.num_players")
    try:
        rules = rules_from_proto(history.rules, "history.rules")
    except ConversionError as error:
        raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
    state = Game(rules, history.num_players).new_state()
    rng = random.Random(history.seed)
    _advance(state, rng)
    for index, action in enumerate(history.actions):
        field = f"history.actions[{index}]"
        if state.is_terminal():
            raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, f"{field}: the game is already over")
        try:
            number = action_number(action, 0)
            state.act(action.seat, number)
        except OhHellError as error:
            raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, f"{field}: {error}") from None
        _advance(state, rng)
    return state, rng


class RulesApi(rules_service_pb2_grpc.RulesServiceServicer):
    async def _run(self, context: grpc.aio.ServicerContext, work):  # type: ignore[no-untyped-def]
        try:
            return work()
        except RequestError as error:
            await context.abort(error.code, str(error))

    async def ListPresets(self, request, context):  # type: ignore[no-untyped-def]
        return rules_service_pb2.ListPresetsResponse(
            presets=[rules_service_pb2.Preset(name=n, rules=rules_to_proto(r)) for n, r in PRESETS.items()]
        )

    async def ResolveRules(self, request, context):  # type: ignore[no-untyped-def]
        def work() -> rules_service_pb2.ResolveRulesResponse:
            _check_players(request.num_players, "num_players")
            try:
                rules = rules_from_proto(request.rules)
            except ConversionError as error:
                raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
            return rules_service_pb2.ResolveRulesResponse(
                rules=rules_to_proto(rules), schedule=hand_sizes(rules, request.num_players))

        return await self._run(context, work)

    async def GetLegalActions(self, request, context):  # type: ignore[no-untyped-def]
        def work() -> rules_service_pb2.GetLegalActionsResponse:
            state, _ = replay_history(request.history)
            response = rules_service_pb2.GetLegalActionsResponse(phase=phase_to_proto(state.phase), scores=state.scores)
            if state.is_terminal():
                return response
            seat = state.current
            response.seat = seat
            legal = state.legal_actions()
            if state.phase == Phase.BID:
                response.kind = match_pb2.DECISION_KIND_BID
                response.legal_bids.extend(a - BID_BASE for a in legal)
            else:
                response.kind = match_pb2.DECISION_KIND_PLAY
                response.legal_cards.extend(card_to_proto(a) for a in legal)
            response.observation.CopyFrom(observation_to_proto(observe(state, seat)))
            return response

        return await self._run(context, work)

    async def ApplyAction(self, request, context):  # type: ignore[no-untyped-def]
        def work() -> rules_service_pb2.ApplyActionResponse:
            state, rng = replay_history(request.history)
            if state.is_terminal():
                raise RequestError(grpc.StatusCode.FAILED_PRECONDITION, "the game is over: no action can be applied")
            if request.action.seat != state.current:
                raise RequestError(grpc.StatusCode.PERMISSION_DENIED,
                                   f"action.seat={request.action.seat} but seat {state.current} is to act")
            try:
                number = action_number(request.action, 0)
            except ConversionError as error:
                raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
            try:
                state.act(request.action.seat, number)
            except OhHellError as error:
                raise RequestError(grpc.StatusCode.FAILED_PRECONDITION, f"action: {error}") from None
            _advance(state, rng)
            history = rules_service_pb2.GameHistory()
            history.CopyFrom(request.history)
            history.actions.append(request.action)
            return rules_service_pb2.ApplyActionResponse(
                history=history, phase=phase_to_proto(state.phase), scores=state.scores, winners=state.winners)

        return await self._run(context, work)

    async def ScoreHand(self, request, context):  # type: ignore[no-untyped-def]
        def work() -> rules_service_pb2.ScoreHandResponse:
            try:
                scoring = enum_from_proto("scoring", request.scoring, "scoring")
            except ConversionError as error:
                raise RequestError(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
            for field in ("bid", "tricks"):
                if getattr(request, field) > request.hand_size:
                    raise RequestError(grpc.StatusCode.INVALID_ARGUMENT,
                                       f"{field}={getattr(request, field)} is more than hand_size={request.hand_size}")
            points = hand_score(scoring, request.bid, request.tricks,
                                request.hand_size, max(request.hand_number, 1), request.vienna)
            return rules_service_pb2.ScoreHandResponse(points=points)

        return await self._run(context, work)

    async def RefereeRecord(self, request, context):  # type: ignore[no-untyped-def]
        verdict = referee_text(request.record_json)
        return rules_service_pb2.RefereeRecordResponse(
            valid=verdict.valid, summary=verdict.summary(), totals=verdict.totals, winners=verdict.winners,
            actions_checked=verdict.actions_checked)
