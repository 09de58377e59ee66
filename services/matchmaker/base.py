"""``ServicerBase``: what every RPC mixin of ``MatchmakerServicer`` stands on: its state, the
store call that maps store errors to gRPC codes, the host and agent checks, and page bounds."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import grpc
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.archive import queries
from arena.archive.db import connect, database_url
from arena.ladder.model import Agent
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import (
    AlreadyExists,
    InUse,
    LimitReached,
    NotFound,
    PermissionDenied,
    Revoked,
    StoreError,
    Unauthenticated,
    shown,
)
from arena.rpc.auth import bearer_token, is_host, same_secret, wants_public_view
from arena.rpc.ratelimit import Limiter
from arena.tournament import jobs as tourney_jobs
from arena.tournament.operations import StandingsCache
from arena.tournament.store import TournamentStore
from ohell.errors import OhHellError

T = TypeVar("T")
MAX_PAGE = 500
PAGE_TOKEN = re.compile(r"^[0-9]{1,9}$")


_CODES = {
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    LimitReached: grpc.StatusCode.RESOURCE_EXHAUSTED,
    InUse: grpc.StatusCode.FAILED_PRECONDITION,
    Revoked: grpc.StatusCode.FAILED_PRECONDITION,
}


def naming_field(error: StoreError, fields: dict[str, str] | None = None) -> str:
    """The store's refusal as every refusal of the matchmaker says it: ``FIELD: what is wrong``, the
    request's field named once (``agent_id: no agent 'a9'``); ``fields`` maps the store's name of a
    field to the request's where they differ (GetLadder's ``name`` is the store's ``ladder``,
    CreateLadder's ``ladder.seats`` its ``seats``). A refusal that starts with its field, as
    ``seats=9 ...``, ``name 'x' ...`` or ``seats: ...`` (or one of its parts: ``ladder.rules.hand_sizes: ...``),
    says it so: ``ladder.seats: 9 ...``. One with no field (a limit) is sent as it is."""
    field = (fields or {}).get(error.field, error.field)
    message = str(error)
    if not field:
        return message
    for named in (field, error.field):
        said = re.match(rf"{re.escape(named)}(?P<part>(?:\.[a-z_]\w*|\[\d+\])*)(?:=|: | )", message)
        if said:
            return f"{field}{said['part']}: {message[said.end() :]}"
    return f"{field}: {message}"


async def abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    """``context.abort``, typed as what it does: it always raises (grpc ships no type hints)."""
    await context.abort(code, message)
    raise AssertionError("context.abort returned")


class ServicerBase:
    """The servicer's state and the checks its RPCs share."""

    def __init__(
        self,
        store: RedisStore,
        poll_s: float = 0.1,
        renew_s: float = 10.0,
        host_token: str | None = None,
        registrations: Limiter | None = None,
        web_token: str | None = None,
        database_url_: str | None = None,
        tourneys: TournamentStore | None = None,
        tourney_dispatch: tourney_jobs.Dispatch | None = None,
    ) -> None:
        self.store = store
        self.tourneys = tourneys  # the tournament RPCs (services/matchmaker/tournaments.py)
        self.tourney_dispatch = tourney_dispatch
        self.standings_cache = StandingsCache()
        self.watches: dict[str, int] = {}  # agent id -> its WatchQueue streams open (services/matchmaker/queueing.py)
        # caller -> its ExportTournament streams open (services/matchmaker/tournaments.py)
        self.exports: dict[str, int] = {}
        self.host_token = host_token
        self.web_token = web_token  # the web app's: it reads, as anyone may
        self.registrations = registrations  # the stricter limit of open self-registration
        self.poll_s = poll_s
        self.renew_s = renew_s
        self.database_url = database_url_ or database_url()
        self._engine: Engine | None = None

    def archive(self) -> Engine:
        """The archive's engine, connected (and migrated) on first use; raises while the database
        cannot be reached, and tries again on the next call."""
        if self._engine is None:
            self._engine = connect(self.database_url)
        return self._engine

    async def _call(
        self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any, fields: dict[str, str] | None = None
    ) -> T:
        """``fn(*args)`` in a thread, its refusals as gRPC codes (``fields``: see ``naming_field``)."""
        try:
            return await asyncio.to_thread(fn, *args)
        except StoreError as error:
            await context.abort(_CODES.get(type(error), grpc.StatusCode.INVALID_ARGUMENT), naming_field(error, fields))
        except OhHellError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except queries.BadCursor:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "page_token: not one this service gave")
        except SQLAlchemyError as error:
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, f"the match archive is unavailable: {type(error).__name__}"
            )
        raise AssertionError("unreachable")

    async def _host(self, context: grpc.aio.ServicerContext, self_registration: bool = False) -> bool:
        """True for the host; False for an anonymous caller when ``self_registration`` is open
        (some ladder admits self-registered agents); otherwise abort (agents only play)."""
        token = bearer_token(context.invocation_metadata())
        if is_host(token, self.host_token):
            return True
        if same_secret(token, self.web_token):
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "this RPC needs the host token; the web app's token only reads",
            )
        if token is not None:
            if await self._call(context, self.store.agent_for_token, token) is not None:
                await abort(
                    context, grpc.StatusCode.PERMISSION_DENIED, "this RPC needs the host token; agent tokens only play"
                )
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "unknown token in 'authorization'")
        missing = "missing metadata 'authorization: Bearer <host token>'"
        if self_registration:
            if await self._call(context, self.store.open_ladder_exists):
                return False
            missing += (
                ": without it an agent registers itself only while some ladder's entry is LADDER_ENTRY_OPEN,"
                " and none is"
            )
        await abort(context, grpc.StatusCode.UNAUTHENTICATED, missing)

    def _is_host(self, context: grpc.aio.ServicerContext) -> bool:
        """Whether the caller presents the host token (no check beyond that: reads are public) and
        does not ask to read as anyone does (``PUBLIC_VIEW``: the web app's reads for its visitors)."""
        metadata = context.invocation_metadata()
        return is_host(bearer_token(metadata), self.host_token) and not wants_public_view(metadata)

    async def _shown_agent(self, context: grpc.aio.ServicerContext, agent: Agent) -> Agent:
        """``agent`` as the caller may see it: an endpoint's address only for the host and the agent
        itself (its own token); anyone else reads the agent without it. Whether (and since when) its
        token is revoked only the host reads: a revoked agent holds no token to ask with, and a
        revocation is the host's business, not the public's (its page reads as any agent's)."""
        if self._is_host(context):
            return agent
        agent = replace(agent, revoked=False, revoked_ms=0)
        if not agent.endpoint:
            return agent
        token = bearer_token(context.invocation_metadata())
        if token is not None and not same_secret(token, self.web_token):
            caller = await self._call(context, self.store.agent_for_token, token)
            if caller is not None and caller.agent_id == agent.agent_id:
                return agent
        return replace(agent, endpoint="")

    async def _caller(self, context: grpc.aio.ServicerContext, agent_id: str) -> Agent:
        token = bearer_token(context.invocation_metadata())
        if token is None:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "missing metadata 'authorization: Bearer <token>'")
        agent = await self._call(context, self.store.agent_for_token, token)
        if agent is None:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "unknown agent token in 'authorization'")
        if agent_id and agent_id != agent.agent_id:
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"agent_id: {agent_id[:80]!r} is not the agent of this token ({agent.agent_id})",
            )
        return agent


async def page_bounds(context: Any, token: str, size: int, field: str = "page", default: int = 50) -> tuple[int, int]:
    """(offset, size) of the page asked for by ``<field>_token`` and ``<field>_size`` (0: ``default``)."""
    if size > MAX_PAGE:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{field}_size: {size} is over {MAX_PAGE}")
    if token and not PAGE_TOKEN.fullmatch(token):
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, f"{field}_token: {shown(token)} is not one this service gave"
        )
    return int(token or 0), size or default
