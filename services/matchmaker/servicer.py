"""The MatchmakerService servicer: thin, over ``RedisStore`` (store calls run in a thread). Its
RPCs come in mixins: ``agents``, ``ladders``, ``queueing``, ``matches``, ``tournaments``; their
shared state and checks in ``base``, the message conversions in ``messages``."""

from __future__ import annotations

from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from services.matchmaker.agents import AgentRpcs
from services.matchmaker.ladders import LadderRpcs
from services.matchmaker.matches import MatchRpcs
from services.matchmaker.queueing import QueueRpcs
from services.matchmaker.tournaments import TournamentRpcs


class MatchmakerServicer(
    TournamentRpcs, AgentRpcs, LadderRpcs, QueueRpcs, MatchRpcs, matchmaker_pb2_grpc.MatchmakerServiceServicer
):
    """The matchmaker's gRPC API (``protos/ohell/v1/matchmaker.proto``)."""
