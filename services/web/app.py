"""The web app: public pages (ladders, leaderboard, agents, matches, replay, live view) and the host's
pages (services/web/host.py). Starlette with Jinja2 templates and a little vanilla JavaScript; every
read goes through ``services.web.api``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.ratelimit import RateLimit
from arena.wire import match_total_text
from services.web import host, tournaments, views
from services.web.api import Api, ApiError
from services.web.errors import ShownError, error_page, http_error_page
from services.web.headers import HEADERS as SECURITY_HEADERS
from services.web.headers import SecurityHeaders
from services.web.pages import HERE, api_of, page, page_part, replay_page
from services.web.visitors import DEFAULT_VISITOR_LIMIT, WEB_RATE_ENV, BodyLimit, VisitorLimit

MATCH_PAGE = 50
RECENT = 12  # an agent's recent matches


async def ladders_page(request: Request) -> Response:
    api = api_of(request)
    ladders = await api.ladders()
    boards = await asyncio.gather(*(api.leaderboard(ladder.name) for ladder in ladders))
    rows = [views.ladder_row(ladder, board) for ladder, board in zip(ladders, boards, strict=True)]
    return page(request, "ladders.html", ladders=rows)


async def leaderboard(request: Request) -> dict[str, Any]:
    """What the leaderboard page shows, all of it in its live part."""
    api = api_of(request)
    name = request.path_params["ladder"]
    ladder, standings = await asyncio.gather(api.ladder(name), api.leaderboard(name))
    running = await api.matches(ladder=name, running=True)
    return {
        "ladder": views.ladder_row(ladder.ladder, standings),
        "waiting": ladder.tickets_waiting,
        "rows": [views.standing_row(s) for s in standings],
        "running": [m.match_id for m in running.matches],
    }


async def leaderboard_page(request: Request) -> Response:
    return page(request, "leaderboard.html", **await leaderboard(request))


async def leaderboard_live(request: Request) -> Response:
    return page_part(request, "_leaderboard_live.html", **await leaderboard(request))


async def agent_view(request: Request) -> dict[str, Any]:
    """What the agent page shows: its standing, chart and recent matches are its live part."""
    api = api_of(request)
    agent_id = request.path_params["agent_id"]
    asked = ladder = request.query_params.get("ladder", "")
    reply = await api.agent(agent_id, ladder)
    recent = (await api.matches(ladder=ladder, agent_id=agent_id, page_size=RECENT)).matches
    if not ladder and recent:  # the ladder it played last of those not deleted since
        existing = {known.name for known in await api.ladders()}
        ladder = next((match.ladder for match in recent if match.ladder in existing), "")
        if ladder:
            reply = await api.agent(agent_id, ladder)
    names, history = await asyncio.gather(
        api.names([a for m in recent for a in m.agent_ids]),
        api.rating_history(agent_id, ladder) if ladder else asyncio.sleep(0, []),
    )
    return {
        "agent": reply.agent,
        "asked_ladder": asked,
        "ladder": ladder,
        "standing": views.standing_row(reply.standing) if ladder else None,
        "matches": [views.match_row(m, names, agent_id) for m in recent],
        "chart": views.rating_chart(history),
        "rated": len(history),
    }


async def agent_page(request: Request) -> Response:
    return page(request, "agent.html", **await agent_view(request))


async def agent_live(request: Request) -> Response:
    return page_part(request, "_agent_live.html", **await agent_view(request))


async def matches_page(request: Request) -> Response:
    api = api_of(request)
    query = request.query_params
    ladder, agent_id = query.get("ladder", ""), query.get("agent", "")
    running = query.get("state") == "running"
    if not ladder and not agent_id:  # the form's "any" ladder with no agent: the form, and what to give it
        ladders = [known.name for known in await api.ladders()]
        return page(request, "matches.html", ladder="", agent_id="", running=running, choose=True, ladders=ladders)
    reply = await api.matches(ladder, agent_id, MATCH_PAGE, query.get("page", ""), running)
    # the filter's agent too: the heading names it when no match of it is listed (it said its id)
    seated = [a for m in reply.matches for a in m.agent_ids]
    names = await api.names([agent_id, *seated] if agent_id else seated)
    shown = len(reply.matches)
    # an agent's name typed for its id listed '0 finished matches': no agent, the page says what to give
    unknown = bool(agent_id) and not shown and names[agent_id] == agent_id and not await agent_exists(api, agent_id)
    return page(
        request,
        "matches.html",
        ladder=ladder,
        agent_id=agent_id,
        agent_name=names[agent_id] if agent_id and not unknown else "",  # its id when the agent is gone
        unknown_agent=unknown,
        running=running,
        matches=[views.match_row(m, names, agent_id) for m in reply.matches],
        next_page=reply.next_page_token,
        total=reply.total_size,
        total_text=match_total_text(reply.total_size),
        shown=shown,
        ladders=[ladder.name for ladder in await api.ladders()],
    )


async def agent_exists(api: Api, agent_id: str) -> bool:
    """Whether the matchmaker has an agent of this id (GetAgent takes ids only: a name is none);
    True when it cannot say (busy or away), so that only a sure answer changes the page."""
    try:
        await api.agent(agent_id)
    except ApiError as error:
        return error.code != "NOT_FOUND"
    return True


async def match_page(request: Request) -> Response:
    api = api_of(request)
    match_id = request.path_params["match_id"]
    summary, record = await api.match(match_id)
    names = await api.names(list(summary.agent_ids))
    if record is None:  # not finished: the live view follows it
        return await live_view(request, summary, names)
    ladder = quote(summary.ladder, safe="")
    seats = views.record_seats(record, list(summary.agent_ids))
    for seat in seats:
        seat["href"] = f"/agents/{quote(seat['agent_id'], safe='')}?ladder={ladder}"
    return replay_page(
        request,
        record,
        seats,
        heading=summary.match_id,
        back_href=f"/ladders/{ladder}",
        back_label=summary.ladder,
        record_href=f"/matches/{quote(summary.match_id, safe='')}/record.json",
    )


async def live_view(request: Request, summary: pb.MatchSummary, names: dict[str, str]) -> Response:
    """A ladder's unfinished match; one of built-in bots only has no live feed (a worker plays it in
    its own process): the page says so at once and its events say when it is over."""
    builtin_only = await api_of(request).builtin_only(list(summary.agent_ids))
    seats = [names[a] for a in summary.agent_ids]
    agent_ids = list(summary.agent_ids)  # by seat: each seat's name links to its agent's page, as the replay's do
    return page(request, "live.html", match=summary, seats=seats, agent_ids=agent_ids, builtin_only=builtin_only)


async def live_page(request: Request) -> Response:
    """The live view of any match the engine hosts (ladder or challenge), by id; a ladder's match
    with its ladder and seats as the matchmaker has them. A finished ladder match has its replay,
    which steps through the whole record: the live view would only show it ending."""
    api = api_of(request)
    match_id = request.path_params["match_id"]
    try:
        summary, record = await api.match(match_id)
    except ApiError as error:  # not a ladder's match, or no matchmaker: the engine's events are enough
        # unknown only if the matchmaker says so: a busy one may hold it (its replay's address was hidden)
        known = error.code != "NOT_FOUND"
        return page(request, "live.html", match=None, match_id=match_id, seats=[], known=known)
    if record is not None:
        return RedirectResponse(f"/matches/{quote(summary.match_id, safe='')}", status_code=303)
    return await live_view(request, summary, await api.names(list(summary.agent_ids)))


async def record_json(request: Request) -> Response:
    summary, record = await api_of(request).match(request.path_params["match_id"])
    if record is None:
        raise HTTPException(404, f"match {summary.match_id} has not finished")
    return JSONResponse(record, headers={"content-disposition": f'attachment; filename="{summary.match_id}.json"'})


FOLLOW_EVERY_S = 1.0  # how often the live view of a match without a feed asks whether it is over


async def without_feed(api: Api, match_id: str) -> bool:
    """Whether the match is a ladder's match of built-in bots only: played inside a worker, no live feed."""
    try:
        summary, _ = await api.match(match_id)
    except ApiError:  # not a ladder's match (a challenge), or the matchmaker cannot say: the engine may have it
        return False
    return await api.builtin_only(list(summary.agent_ids))


# how a ladder's match without a feed ended but with its record: the live view's 'failed' event
# (neither has a replay to link: 'the match is over: watch its replay' sent to this page again)
UNRECORDED = {
    "failed": "the match failed before its end: it has no replay",
    "gone": "the match is no longer known (its ladder deleted?): it has no replay",
}


async def ending(api: Api, match_id: str, request: Request) -> str | None:
    """Wait until the ladder's match is over: 'finished' (its record kept), 'failed' (a state without
    one) or 'gone' (the matchmaker no longer knows it); None if the visitor left first."""
    while True:
        try:
            summary, record = await api.match(match_id)
            if record is not None:
                return "finished"
            if summary.state not in ("queued", "running"):
                return "failed"
        except ApiError as error:
            if error.code == "NOT_FOUND":  # asked for ever, every second, while the page stayed open
                return "gone"
            # busy or away for now: asked again
        await asyncio.sleep(FOLLOW_EVERY_S)
        if await request.is_disconnected():
            return None


async def events(request: Request) -> Response:
    """Server-sent events: the match's public events from the engine's spectate stream; for a match of
    built-in bots only, which has none, only its end."""
    api = api_of(request)
    match_id = request.path_params["match_id"]

    async def stream() -> AsyncIterator[str]:
        try:
            if await without_feed(api, match_id):
                ended = await ending(api, match_id, request)
                if ended == "finished":
                    yield "event: done\ndata: {}\n\n"
                elif ended is not None:
                    said = {"code": ended.upper(), "error": UNRECORDED[ended], "final": True}
                    yield f"event: failed\ndata: {json.dumps(said)}\n\n"
                return
            async for event in api.spectate(match_id, wait_ms=10_000):
                yield f"event: match\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"
                if await request.is_disconnected():
                    return
            yield "event: done\ndata: {}\n\n"
        except ApiError as error:
            shown = error_page(error)  # the error page's words: the engine's own may name its address
            yield f"event: failed\ndata: {json.dumps({'code': error.code, 'error': shown.message})}\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"cache-control": "no-store"})


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


def shown_page(request: Request, shown: ShownError) -> Response:
    response = page(request, "error.html", shown.status, title=shown.title, message=shown.message)
    if shown.retry_after:
        response.headers["retry-after"] = shown.retry_after
    return response


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return shown_page(request, error_page(exc))


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return shown_page(request, http_error_page(exc.status_code, exc.detail))


async def server_error(request: Request, exc: Exception) -> Response:
    """A fault of the app itself: plain words, nothing of the error. Starlette answers it outside
    every middleware, so it carries the security headers itself."""
    return PlainTextResponse("500: the web app failed on this page", 500, headers=SECURITY_HEADERS)


def create_app(api: Api, host_token: str = "", visitor_limit: RateLimit | None = None) -> Starlette:
    """``visitor_limit``: each visitor's requests (default: ``$OHELL_WEB_RATE_LIMIT``, else 20/s, bursts of 60)."""

    sessions = host.HostSessions(host_token)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        sessions.wrong_tokens.close()
        await api.close()

    routes = [
        Route("/", ladders_page),
        Route("/ladders/{ladder}", leaderboard_page),
        Route("/ladders/{ladder}/live", leaderboard_live),
        Route("/agents/{agent_id}", agent_page),
        Route("/agents/{agent_id}/live", agent_live),
        Route("/matches", matches_page),
        Route("/matches/{match_id}", match_page),
        Route("/matches/{match_id}/record.json", record_json),
        Route("/live/{match_id}", live_page),
        Route("/live/{match_id}/events", events),
        Route("/healthz", health),
        *host.routes(),
        *tournaments.routes(),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
        middleware=[
            Middleware(SecurityHeaders),  # outermost: the limits' refusals carry them too
            Middleware(
                VisitorLimit,
                limit=visitor_limit or RateLimit.from_env(WEB_RATE_ENV, DEFAULT_VISITOR_LIMIT),
                host_session=sessions.session_of,
            ),
            Middleware(BodyLimit),
            Middleware(host.HostReads, sessions=sessions),
        ],
    )
    app.state.api = api
    app.state.host = sessions
    return app
