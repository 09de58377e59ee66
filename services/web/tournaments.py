"""Tournament pages: the public list, a tournament's page (progress, tables, standings with their
95 % intervals and P(above next); its live part is fetched again every few seconds while the
tournament runs; once it has ended, each table's games link their replays, or the table links its
own page of them when it has many), a table's games, a game's replay (both only once the tournament
has ended: the matchmaker refuses a game's record before), the exports, the host's page to
create one and the host's forms to resume or cancel one (behind the host login of
services/web/host.py). Every read and change goes through the matchmaker's tournament RPCs."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.tournament.messages import entrant_from_text
from arena.tournament.model import ID_RULE, MAX_ENTRANTS, TournamentError
from arena.wire import given_rules, rules_to_proto
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError
from ohell.presets import PRESETS
from services.web import tournament_views as tv
from services.web import views
from services.web.api import Api, ApiError, deadline
from services.web.host import _form, sessions
from services.web.pages import api_of, page, page_part, replay_page

LIST_PAGE = 100
TABLE_PAGE = 100  # tables on a tournament's page (a tournament may have 6,800)
MAX_OPTIONS = 20
MAX_FIELD_CHARS = 20_000  # a form field's text (200 entrants of ~100 characters)
FORMATS = {"round-robin": tpb.TOURNAMENT_FORMAT_ROUND_ROBIN, "swiss": tpb.TOURNAMENT_FORMAT_SWISS}
EXPORTS = {"csv": tpb.EXPORT_FORMAT_CSV, "json": tpb.EXPORT_FORMAT_JSON}


async def _get(api: Api, tourney_id: str, tables: str = "") -> Any:
    """The tournament with the page of its tables that ``tables`` (a page token; '' for the first) names."""
    request = tpb.GetTournamentRequest(tournament_id=tourney_id, table_page_size=TABLE_PAGE, table_page_token=tables)
    return await api.call("GetTournament", request)


async def list_page(request: Request) -> Response:
    token = request.query_params.get("page", "")
    reply = await api_of(request).call(
        "ListTournaments", tpb.ListTournamentsRequest(page_size=LIST_PAGE, page_token=token)
    )
    rows = [tv.summary_row(s.tournament, s.progress, s.entrant_count) for s in reply.tournaments]
    return page(request, "tournaments.html", tournaments=rows, next_page=reply.next_page_token)


async def tournament_page(request: Request) -> Response:
    tables = request.query_params.get("tables", "")
    reply = await _get(api_of(request), request.path_params["tid"], tables)
    return page(request, "tournament.html", csrf=sessions(request).csrf(request), **tv.detail(reply, tables))


async def live_part(request: Request) -> Response:
    """The part of the tournament page that changes while it runs (fetched again by static/live-part.js),
    with the page of tables the visitor is on."""
    tables = request.query_params.get("tables", "")
    reply = await _get(api_of(request), request.path_params["tid"], tables)
    return page_part(request, "_tournament_live.html", csrf=sessions(request).csrf(request), **tv.detail(reply, tables))


async def table_page(request: Request) -> Response:
    """One table's games (deal set by rotation), linked from the tournament page for a table with more
    games than it lists inline: only once the tournament has ended (400 before, as its games' replays),
    a bad or unknown table id named by the matchmaker (400, 404)."""
    tourney_id = request.path_params["tid"]
    asked = tpb.GetTournamentRequest(tournament_id=tourney_id, table_id=request.path_params["table"])
    reply = await api_of(request).call("GetTournament", asked)
    summary = tv.summary_row(reply.tournament, reply.progress)
    if summary["state"] == "running":
        raise HTTPException(400, f"tournament {tourney_id!r} is still running: its games are shown once it has ended")
    table = next((t for t in reply.tables if t.table_id == asked.table_id), None)
    if table is None:  # a matchmaker before revision 15 answers the first page of tables instead
        raise HTTPException(404, f"table_id: tournament {tourney_id!r} has no table {asked.table_id[:80]!r} here")
    rotations, deals = tv.game_grid(table, tourney_id)
    return page(
        request, "tournament_table.html", t=summary, x=tv.table_row(table, tourney_id), rotations=rotations, deals=deals
    )


async def game_page(request: Request) -> Response:
    """A game's replay (``<table>/d<deal set>/r<rotation>``): GetTournamentGame refuses it while the
    tournament runs (400), and names a bad or unknown id (400, 404)."""
    tourney_id = request.path_params["tid"]
    game = "/".join(request.path_params[part] for part in ("table", "deal", "turn"))
    reply = await api_of(request).call(
        "GetTournamentGame", tpb.GetTournamentGameRequest(tournament_id=tourney_id, game_id=game)
    )
    record = json.loads(reply.record_json)
    seats = [{**seat, "href": ""} for seat in views.record_seats(record, [])]
    return replay_page(
        request,
        record,
        seats,
        heading=f"{tourney_id} {game}",
        back_href=f"/tournaments/{quote(tourney_id, safe='')}",
        back_label=f"tournament {tourney_id}",
    )


async def export(request: Request) -> Response:
    """The export as a download, streamed from ExportTournament (a NOT_FOUND shows the error page)."""
    fmt = request.path_params["fmt"]
    if fmt not in EXPORTS:
        raise HTTPException(404, f"no export format {fmt!r}: csv or json")
    asked = tpb.ExportTournamentRequest(tournament_id=request.path_params["tid"], format=EXPORTS[fmt])
    first, data = await api_of(request).export(asked)
    disposition = f'attachment; filename="{first.filename}"'
    return StreamingResponse(data, media_type=first.content_type, headers={"content-disposition": disposition})


def tournament_from_form(form: Any) -> tpb.Tournament:
    """The CreateTournament message from the host's form; OhHellError naming the field when a value is
    unusable (the matchmaker checks everything again)."""
    texts = {key: str(form.get(key, "")) for key in ("entrants", "options")}
    if any(len(text) > MAX_FIELD_CHARS for text in texts.values()):
        raise OhHellError(f"entrants and options: at most {MAX_FIELD_CHARS} characters each")
    lines = [line.strip() for line in texts["entrants"].splitlines() if line.strip()]
    if not 1 <= len(lines) <= MAX_ENTRANTS:
        raise OhHellError(f"entrants: {len(lines)} given, 1 to {MAX_ENTRANTS} allowed (one per line)")
    options = [line.strip() for line in texts["options"].splitlines() if line.strip()]
    if len(options) > MAX_OPTIONS:
        raise OhHellError(f"options: at most {MAX_OPTIONS}")
    name = str(form.get("preset", "classic"))
    if name not in PRESETS:
        raise OhHellError(f"rules: {name[:80]!r} is not a preset")
    rules = rules_to_proto(given_rules(name, options, ("rules", "options")))
    rules.preset = name
    fmt = str(form.get("format", "round-robin"))
    if fmt not in FORMATS:
        raise OhHellError(f"format: {fmt!r} must be round-robin or swiss")
    numbers = {}
    for key, default in (("seats", "3"), ("rounds", "1"), ("deals", "2"), ("grace_seconds", "30")):
        text = str(form.get(key, "") or default).strip()
        try:
            numbers[key] = float(text) if key == "grace_seconds" else int(text)
        except ValueError:
            raise OhHellError(f"{key}: {text[:20]!r} is not a number") from None
        # a count from 1: the request's 0 stands for the default (3 seats, 1 round, 2 deal sets), so a 0
        # typed was played as that default
        if numbers[key] < (0 if key == "grace_seconds" else 1) or numbers[key] > 10_000:
            raise OhHellError(f"{key}: {text[:20]!r} is out of range")
    return tpb.Tournament(
        tournament_id=str(form.get("tournament_id", "")).strip(),
        entrants=[entrant_message(line) for line in lines],
        rules=rules,
        format=FORMATS[fmt],
        seats=int(numbers["seats"]),
        rounds=int(numbers["rounds"]),
        deals=int(numbers["deals"]),
        grace_seconds=numbers["grace_seconds"],
    )


def entrant_message(line: str) -> tpb.TournamentEntrant:
    try:
        return entrant_from_text(line)
    except TournamentError as error:
        raise OhHellError(f"entrants: {error}") from None


async def host_page(request: Request, error: str = "", form: Any = None) -> Response:
    host = sessions(request)
    if not host.signed_in(request):
        return RedirectResponse("/host/login", status_code=303)
    reply = await api_of(request).call("ListTournaments", tpb.ListTournamentsRequest(page_size=LIST_PAGE))
    return page(
        request,
        "host_tournaments.html",
        status_code=400 if error else 200,
        csrf=host.csrf(request),
        error=error,
        form=dict(form or {}),
        presets=sorted(PRESETS),
        bots=sorted(BOT_FACTORIES),
        id_rule=ID_RULE,
        tournaments=[tv.summary_row(s.tournament, s.progress, s.entrant_count) for s in reply.tournaments],
    )


async def create(request: Request) -> Response:
    form = await _form(request)
    api = api_of(request)
    try:
        message = tournament_from_form(form)
        await api.call(
            "CreateTournament", tpb.CreateTournamentRequest(tournament=message), sessions(request).host_token
        )
    except OhHellError as error:
        return await host_page(request, error=f"tournament not created: {error}", form=form)
    except ApiError as error:
        if error.code == "DEADLINE_EXCEEDED" and await _exists(api, message.tournament_id):
            return RedirectResponse(f"/tournaments/{message.tournament_id}", status_code=303)
        return await host_page(request, error=creation_failed(error, message.tournament_id), form=form)
    return RedirectResponse(f"/tournaments/{message.tournament_id}", status_code=303)


async def _exists(api: Api, tourney_id: str) -> bool:
    try:
        await _get(api, tourney_id)
    except ApiError:
        return False
    return True


def creation_failed(error: ApiError, tourney_id: str) -> str:
    """What the host page says when CreateTournament failed: what the host should do about it."""
    if error.code == "DEADLINE_EXCEEDED":
        return (
            f"tournament {tourney_id} not created yet: the matchmaker did not answer within "
            f"{deadline('CreateTournament'):.0f} s and may still be creating it; look for it in the list "
            "below in a minute before creating it again"
        )
    if error.code == "ALREADY_EXISTS":
        return f"tournament not created: {tourney_id} exists already (see /tournaments/{tourney_id}); choose another id"
    return f"tournament not created: {error.message}"


async def _host_call(request: Request, tourney_id: str, method: str, message: Any, what: str) -> Response:
    """A host's RPC on a tournament: back to its page, or the host page saying why not."""
    try:
        await api_of(request).call(method, message, sessions(request).host_token)
    except ApiError as error:
        return await host_page(request, error=f"{what} {tourney_id}: {error.message}")
    return RedirectResponse(f"/tournaments/{tourney_id}", status_code=303)


async def resume(request: Request) -> Response:
    await _form(request)
    tourney_id = request.path_params["tid"]
    message = tpb.ResumeTournamentRequest(tournament_id=tourney_id)
    return await _host_call(request, tourney_id, "ResumeTournament", message, "resume")


async def cancel(request: Request) -> Response:
    """Cancelling cannot be undone: the host types the tournament's id to confirm it."""
    form = await _form(request)
    tourney_id = request.path_params["tid"]
    if str(form.get("confirm", "")).strip() != tourney_id:
        return await host_page(
            request, error=f"cancel {tourney_id}: type the tournament's id ({tourney_id}) to cancel it"
        )
    message = tpb.CancelTournamentRequest(tournament_id=tourney_id)
    return await _host_call(request, tourney_id, "CancelTournament", message, "cancel")


async def host_get(request: Request) -> Response:
    return await host_page(request)


def routes() -> list[Route]:
    return [
        Route("/tournaments", list_page),
        Route("/tournaments/{tid}", tournament_page),
        Route("/tournaments/{tid}/live", live_part),
        Route("/tournaments/{tid}/export.{fmt}", export),
        Route("/tournaments/{tid}/tables/{table}", table_page),
        Route("/tournaments/{tid}/games/{table}/{deal}/{turn}", game_page),
        Route("/host/tournaments", host_get),
        Route("/host/tournaments/new", create, methods=["POST"]),
        Route("/host/tournaments/{tid}/resume", resume, methods=["POST"]),
        Route("/host/tournaments/{tid}/cancel", cancel, methods=["POST"]),
    ]
