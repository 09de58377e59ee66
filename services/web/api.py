"""Everything the web app reads or changes goes through here: the matchmaker's and the engine's gRPC
APIs (never Redis keys). Admin calls carry the host token as bearer metadata; reads carry the
``read_token`` when the app has one: the web app's token (``OHELL_WEB_TOKEN``, which the services
give a rate limit sized for the web app), else the host token. The services count calls per caller,
and without a token every visitor would count as this one anonymous caller (the app bounds each
visitor itself: services/web/visitors.py). A signed-in host's requests read from the matchmaker
with the host token (``HOST_READS``, set by services/web/host.py's ``HostReads``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format

from arena.proto.ohell.v1 import cards_pb2, matchmaker_pb2_grpc, spectate_pb2, spectate_pb2_grpc
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import PUBLIC_VIEW, auth_metadata
from arena.tournament.model import CREATE_DEADLINE_S
from arena.wire import card_from_proto
from ohell.cards import card_str

TIMEOUT_S = 10.0
CHART_POINTS = 5000  # the latest rating points the agent page charts (one page of GetRatingHistory)
NAME_RETRY_S = 5.0  # an agent whose name could not be read is asked again after this long
# ids kept waiting to be asked again; past them, those whose wait is over are forgotten, then those
# whose wait ends first (asked again sooner): the match list's agent filter asks the name of any id a
# visitor types, most of them no agent's, thousands within one wait
MAX_UNNAMED = 1000
# the read metadata of a signed-in host's request: the host token, which the matchmaker does not
# limit, so visitors who use up the web app's budget there leave the host its pages
MAX_HOST_AGENTS = 10_000  # the host page reads this many agents at most (20 ListAgents pages)
HOST_READS: ContextVar[tuple[tuple[str, str], ...] | None] = ContextVar("host_reads", default=None)
# A tournament export's stream has no deadline of its own (a download lasts as long as its visitor
# takes: 40 MB at 1 MB/s is 40 s, and TIMEOUT_S cut such a download short); each next piece (up to
# 1 MiB) must come from the matchmaker and be taken by the visitor within this, else the stream is cut
EXPORT_PIECE_S = 60.0


def deadline(method: str) -> float:
    """Seconds to wait for the matchmaker's answer: TIMEOUT_S, but what the largest tournament takes to
    create for CreateTournament."""
    return CREATE_DEADLINE_S if method == "CreateTournament" else TIMEOUT_S


@dataclass
class ApiError(Exception):
    code: str  # the gRPC status code's name, e.g. NOT_FOUND
    message: str
    retry_after_s: float | None = None  # the matchmaker's ``retry-after`` of a RESOURCE_EXHAUSTED

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ExportCut(Exception):
    """An export's stream ended before its end: its download must fail, not look whole."""


def _error(error: grpc.aio.AioRpcError) -> ApiError:
    return ApiError(error.code().name, error.details() or "", _retry_after(error.trailing_metadata()))


def _retry_after(metadata: Any) -> float | None:
    for key, value in metadata or ():
        if key == "retry-after":
            try:
                seconds = float(value)
            except (TypeError, ValueError):
                return None
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return None


class Api:
    def __init__(self, matchmaker_address: str, engine_address: str = "", read_token: str = "") -> None:
        self.matchmaker_address = matchmaker_address
        self.engine_address = engine_address
        # read as anyone does, also with the host token: what the host alone may read (endpoints'
        # addresses) is never served to a visitor
        self.read_metadata = (*auth_metadata(read_token), PUBLIC_VIEW) if read_token else None
        self._matchmaker: grpc.aio.Channel | None = None
        self._engine: grpc.aio.Channel | None = None
        self._names: dict[str, str] = {}  # agent id -> name (names never change)
        self._unnamed: dict[str, float] = {}  # agent id -> when (monotonic) to ask for its name again
        self._kinds: dict[str, int] = {}  # agent id -> AgentKind (kinds never change either)

    @property
    def mm(self) -> matchmaker_pb2_grpc.MatchmakerServiceStub:
        if self._matchmaker is None:  # made on first use, inside the server's event loop
            self._matchmaker = grpc.aio.insecure_channel(self.matchmaker_address)
        return matchmaker_pb2_grpc.MatchmakerServiceStub(self._matchmaker)

    async def close(self) -> None:
        for channel in (self._matchmaker, self._engine):
            if channel is not None:
                await channel.close()
        self._matchmaker = self._engine = None

    async def _call(self, method: str, request: Any, token: str = "") -> Any:
        call = getattr(self.mm, method, None)
        if call is None:
            raise ApiError("UNIMPLEMENTED", f"{method} is not in this matchmaker's API yet")
        try:
            metadata = auth_metadata(token) if token else HOST_READS.get() or self.read_metadata
            return await call(request, timeout=deadline(method), metadata=metadata)
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None

    async def call(self, method: str, request: Any, token: str = "") -> Any:
        """Any matchmaker RPC by name with its request (the tournament pages: services/web/tournaments.py);
        ``token`` goes as bearer metadata when given."""
        return await self._call(method, request, token)

    # ---- public reads

    async def ladders(self) -> list[pb.Ladder]:
        return list((await self._call("ListLadders", pb.ListLaddersRequest())).ladders)

    async def ladder(self, name: str) -> pb.GetLadderResponse:
        return await self._call("GetLadder", pb.GetLadderRequest(name=name))

    async def leaderboard(self, ladder: str) -> list[pb.Standing]:
        standings: list[pb.Standing] = []
        token = ""
        while True:
            reply = await self._call(
                "GetLeaderboard", pb.GetLeaderboardRequest(ladder=ladder, page_size=500, page_token=token)
            )
            standings += reply.standings
            for s in reply.standings:
                self._names[s.agent_id] = s.name
            token = reply.next_page_token
            if not token:
                return standings

    async def agent(self, agent_id: str, ladder: str = "") -> pb.GetAgentResponse:
        reply = await self._call("GetAgent", pb.GetAgentRequest(agent_id=agent_id, ladder=ladder))
        self._names[agent_id] = reply.agent.name
        self._kinds[agent_id] = reply.agent.kind
        return reply

    async def builtin_only(self, agent_ids: list[str]) -> bool:
        """Whether every one of the agents is a built-in bot (a match of theirs is played inside a
        worker, with no live feed); False when one's kind cannot be read. One GetAgent per agent the
        app has not read yet: each kind is asked once."""
        missing = sorted({a for a in agent_ids if a not in self._kinds})
        await asyncio.gather(*(self.agent(a) for a in missing), return_exceptions=True)
        return bool(agent_ids) and all(self._kinds.get(a) == pb.AGENT_KIND_BUILTIN for a in agent_ids)

    async def names(self, agent_ids: list[str]) -> dict[str, str]:
        """Each agent's name, else its id: an agent whose name could not be read (the matchmaker
        busy or away, or no such agent) shows as its id until it is asked again: after NAME_RETRY_S, or
        the ``retry-after`` of a refusal."""
        now = time.monotonic()
        missing = sorted({a for a in agent_ids if a and a not in self._names and self._unnamed.get(a, 0.0) <= now})
        replies = await asyncio.gather(*(self.agent(a) for a in missing), return_exceptions=True)
        for agent_id, reply in zip(missing, replies, strict=True):
            if isinstance(reply, ApiError) and reply.retry_after_s is not None:
                self._unnamed[agent_id] = now + min(reply.retry_after_s, NAME_RETRY_S)
            elif isinstance(reply, BaseException):
                self._unnamed[agent_id] = now + NAME_RETRY_S
            else:
                self._unnamed.pop(agent_id, None)
        if len(self._unnamed) > MAX_UNNAMED:
            self._unnamed = {a: until for a, until in self._unnamed.items() if until > now}
        if len(self._unnamed) > MAX_UNNAMED:
            latest = sorted(self._unnamed.items(), key=lambda item: item[1])[-MAX_UNNAMED:]
            self._unnamed = dict(latest)
        return {a: self._names.get(a, a) for a in agent_ids}

    async def matches(
        self, ladder: str = "", agent_id: str = "", page_size: int = 50, page_token: str = "", running: bool = False
    ) -> pb.ListMatchesResponse:
        request = pb.ListMatchesRequest(ladder=ladder, agent_id=agent_id, page_size=page_size, page_token=page_token)
        if running:
            request.state = "running"
        return await self._call("ListMatches", request)

    async def match(self, match_id: str) -> tuple[pb.MatchSummary, dict[str, Any] | None]:
        reply = await self._call("GetMatch", pb.GetMatchRequest(match_id=match_id))
        return reply.match, (json.loads(reply.record_json) if reply.record_json else None)

    async def rating_history(self, agent_id: str, ladder: str) -> list[pb.RatingPoint]:
        """The agent's rating before and after each of its latest archived matches on ``ladder`` (at
        most ``CHART_POINTS``), oldest first: one newest-first page of ``GetRatingHistory``."""
        request = pb.GetRatingHistoryRequest(
            agent_id=agent_id, ladder=ladder, page_size=CHART_POINTS, newest_first=True
        )
        reply = await self._call("GetRatingHistory", request)
        return list(reversed(reply.points))

    async def spectate(self, match_id: str, wait_ms: int = 0) -> AsyncIterator[dict[str, Any]]:
        """The public events of a match as plain dicts (cards as "QS"); none is ever a hidden card."""
        if not self.engine_address:
            raise ApiError("UNAVAILABLE", "this web app was started without --engine")
        if self._engine is None:
            self._engine = grpc.aio.insecure_channel(self.engine_address)
        stub = spectate_pb2_grpc.SpectateServiceStub(self._engine)
        call = stub.Spectate(
            spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=wait_ms), metadata=self.read_metadata
        )
        try:
            async for reply in call:
                yield event_dict(reply.event)
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        finally:
            call.cancel()

    async def export(self, request: Any) -> tuple[Any, AsyncIterator[bytes]]:
        """ExportTournament: its first piece (within TIMEOUT_S; ApiError when refused) and the data of
        every piece, the first included. The stream is cancelled once the data is read to its end or
        given up, and cut (ExportCut) when a piece takes longer than EXPORT_PIECE_S to come and be
        taken: a visitor who stops reading does not hold the matchmaker's stream (and its piece)."""
        call = self.mm.ExportTournament(request, metadata=self.read_metadata)
        try:
            first = await asyncio.wait_for(call.read(), TIMEOUT_S)
        except BaseException as error:  # refused, too late, or the visitor left before the first piece
            call.cancel()
            if isinstance(error, grpc.aio.AioRpcError):
                raise _error(error) from None
            if isinstance(error, TimeoutError):
                raise ApiError("DEADLINE_EXCEEDED", f"no answer within {TIMEOUT_S:g} s") from None
            raise
        if first is grpc.aio.EOF:  # a matchmaker answers with one piece at least
            raise ApiError("UNKNOWN", "the export came empty")
        return first, self._pieces(call, first.data)

    @staticmethod
    async def _pieces(call: Any, data: bytes) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        stalled: list[bool] = []

        def cut() -> None:
            stalled.append(True)
            call.cancel()

        timer = loop.call_later(EXPORT_PIECE_S, cut)
        try:
            while True:
                yield data  # the visitor takes it: its time counts too
                timer.cancel()
                timer = loop.call_later(EXPORT_PIECE_S, cut)
                try:
                    piece = await call.read()
                except asyncio.CancelledError:
                    if stalled:
                        raise ExportCut(f"a piece took over {EXPORT_PIECE_S:g} s to come and be read") from None
                    raise
                except grpc.aio.AioRpcError as error:
                    raise ExportCut(str(_error(error))) from None
                if piece is grpc.aio.EOF:
                    return
                data = piece.data
        finally:
            timer.cancel()
            call.cancel()

    # ---- host (admin) calls: the host token goes with each

    async def create_ladder(self, token: str, ladder: pb.Ladder) -> pb.Ladder:
        return (await self._call("CreateLadder", pb.CreateLadderRequest(ladder=ladder), token)).ladder

    async def update_ladder(self, token: str, ladder: pb.Ladder) -> pb.Ladder:
        """UpdateLadder: ``ladder`` is the whole definition (what it leaves out goes back to defaults)."""
        return (await self._call("UpdateLadder", pb.UpdateLadderRequest(ladder=ladder), token)).ladder

    async def register_agent(self, token: str, name: str, kind: int, bot: str = "", endpoint: str = "") -> Any:
        request = pb.RegisterAgentRequest(name=name, kind=kind, bot=bot, endpoint=endpoint)  # type: ignore[arg-type]
        return await self._call("RegisterAgent", request, token)

    async def join_queue(self, agent_token: str, ladder: str, agent_id: str) -> None:
        """Queue an agent on ``ladder`` with its own token (JoinQueue is the agent's call)."""
        await self._call("JoinQueue", pb.JoinQueueRequest(ladder=ladder, agent_id=agent_id), agent_token)

    async def host_agents(self, token: str) -> list[pb.Agent]:
        """Every agent as the host reads it (``revoked`` included), up to MAX_HOST_AGENTS."""
        agents: list[pb.Agent] = []
        page_token = ""
        while len(agents) < MAX_HOST_AGENTS:
            reply = await self._call("ListAgents", pb.ListAgentsRequest(page_size=500, page_token=page_token), token)
            agents += reply.agents
            page_token = reply.next_page_token
            if not page_token:
                break
        return agents[:MAX_HOST_AGENTS]

    async def admin(self, token: str, method: str, **fields: Any) -> Any:
        """An admin RPC of the integrity issue by name (PauseLadder, ResumeLadder, DeleteLadder,
        RotateAgentToken, RevokeAgentToken, ListAgents); UNIMPLEMENTED until the API has it."""
        request_type = getattr(pb, f"{method}Request", None)
        if request_type is None:
            raise ApiError("UNIMPLEMENTED", f"{method} is not in this matchmaker's API yet")
        return await self._call(method, request_type(**fields), token)


def _cards(value: Any) -> Any:
    """Replace every {suit, rank} card in a MessageToDict result by its text ("QS")."""
    if isinstance(value, dict):
        if set(value) == {"suit", "rank"}:
            card = cards_pb2.Card(suit=value["suit"], rank=value["rank"])
            return card_str(card_from_proto(card))
        return {k: _cards(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cards(v) for v in value]
    return value


def event_dict(event: Any) -> dict[str, Any]:
    kind = event.WhichOneof("event")
    body = json_format.MessageToDict(
        getattr(event, kind),
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
        use_integers_for_enums=False,
    )
    return {"sequence": event.sequence, "kind": kind, **_cards(body)}
