"""The host's pages, behind a login with the host credential (``OHELL_HOST_TOKEN``): create, pause,
resume and delete ladders (the host types the ladder's name to delete it), change their settings
(read, changed, sent back whole: ``update_ladder``), register agents (one,
many, or from a CSV) and download their tokens, faults per agent.
The right host token always signs in; wrong ones are limited (services/web/sign_in.py). A signed-in
host's requests read from the matchmaker with the host token (``HostReads``).

A session is a random id in an HttpOnly, SameSite=Strict cookie (Secure over https), kept in this
process; every form carries the session's CSRF token. The host token itself goes with each admin RPC as bearer metadata.
"""

from __future__ import annotations

import asyncio
import base64
import csv
import hmac
import io
import math
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.ladder.limits import LADDER_NAME, LADDER_NAME_RULE
from arena.ladder.model import AGENT_NAME_RULE
from arena.ladder.roster import first_cells, roster_names, roster_text
from arena.ladder_text import changes, entry_text
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from arena.rpc.auth import PUBLIC_VIEW, auth_metadata
from arena.sdk.arguments import UINT32
from arena.wire import ENTRY_NAMES
from ohell.bots import BOT_FACTORIES
from ohell.presets import PRESETS
from services.web import views
from services.web.api import HOST_READS, ApiError
from services.web.pages import api_of, page
from services.web.sign_in import WrongTokens

COOKIE = "ohell_host"
MAX_SESSIONS = 64
SESSION_S = 12 * 3600.0
MAX_AGENTS_PER_FORM = 500
MAX_CSV_BYTES = 256 * 1024
KINDS = {"connected": pb.AGENT_KIND_CONNECTED, "builtin": pb.AGENT_KIND_BUILTIN, "endpoint": pb.AGENT_KIND_ENDPOINT}


class HostSessions:
    """Signed-in host sessions of this process: at most MAX_SESSIONS (the oldest go first), each
    valid for SESSION_S seconds."""

    def __init__(self, host_token: str) -> None:
        self.host_token = host_token
        self._sessions: dict[str, tuple[str, float]] = {}  # session id -> (its CSRF token, expiry)
        self.wrong_tokens = WrongTokens()
        self._notes: dict[str, str] = {}  # session id -> what its next host page says (a form's outcome)

    def check_token(self, token: str) -> bool:
        return bool(self.host_token) and hmac.compare_digest(token.encode(), self.host_token.encode())

    def open(self) -> str:
        while len(self._sessions) >= MAX_SESSIONS:
            self.close(next(iter(self._sessions)))
        session = secrets.token_urlsafe(24)
        self._sessions[session] = (secrets.token_urlsafe(24), time.monotonic() + SESSION_S)
        return session

    def close(self, session: str) -> None:
        self._sessions.pop(session, None)
        self._notes.pop(session, None)

    def note(self, request: Request, text: str) -> None:
        """What the session's next host page says: too long (and too free) a text for the address."""
        session = self.session_of(request.scope)
        if session is not None:
            self._notes[session] = text

    def take_note(self, request: Request) -> str:
        return self._notes.pop(request.cookies.get(COOKIE, ""), "")

    def csrf(self, request: Request) -> str | None:
        session = request.cookies.get(COOKIE, "")
        csrf, expires = self._sessions.get(session, ("", 0.0))
        if time.monotonic() >= expires:
            self._sessions.pop(session, None)
            return None
        return csrf

    def signed_in(self, request: Request) -> bool:
        return self.csrf(request) is not None

    def session_of(self, scope: Scope) -> str | None:
        """The id of the live session the request's cookie names, else None."""
        request = Request(scope)
        return request.cookies.get(COOKIE) if self.signed_in(request) else None


class HostReads:
    """ASGI middleware: a signed-in host's request reads from the matchmaker with the host token
    (``services.web.api.HOST_READS``), as anyone does (``ohell-view: public``)."""

    def __init__(self, app: ASGIApp, sessions: HostSessions) -> None:
        self.app = app
        self.sessions = sessions
        self.metadata = (*auth_metadata(sessions.host_token), PUBLIC_VIEW)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.sessions.session_of(scope) is None:
            await self.app(scope, receive, send)
            return
        reads = HOST_READS.set(self.metadata)
        try:
            await self.app(scope, receive, send)
        finally:
            HOST_READS.reset(reads)


def sessions(request: Request) -> HostSessions:
    return request.app.state.host  # type: ignore[no-any-return]


async def _form(request: Request) -> Any:
    """The posted form of a signed-in host with the right CSRF token, else 403 (without a session,
    before the body is read)."""
    csrf = sessions(request).csrf(request)
    if csrf is None:
        raise HTTPException(403, "sign in as the host first")
    form = await request.form(max_files=1, max_fields=50)
    if not hmac.compare_digest(str(form.get("csrf", "")).encode(), csrf.encode()):  # bytes: a str not ASCII raises
        raise HTTPException(403, "the form is out of date: reload the page")
    return form


async def login(request: Request) -> Response:
    host = sessions(request)
    enabled = bool(host.host_token)
    if request.method == "GET":
        return page(request, "login.html", enabled=enabled, error="")
    form = await request.form(max_files=0, max_fields=5)  # at most visitors.MAX_SIGN_IN_BYTES
    if not host.check_token(str(form.get("token", "")).strip()):  # the right token: at any time
        wait_ms = host.wrong_tokens.wait_ms(request.client.host if request.client else "unknown")
        if wait_ms > 0:
            seconds = str(max(1, math.ceil(wait_ms / 1000)))
            error = f"too many sign-in attempts with a wrong token: wrong ones are refused for {seconds} s"
            error += " (the host token is not)"
            response = page(request, "login.html", 429, enabled=enabled, error=error)
            response.headers["retry-after"] = seconds
            return response
        message = "wrong host token" if enabled else "host pages are off: start the web app with a host token"
        return page(request, "login.html", 403, enabled=enabled, error=message)
    response = RedirectResponse("/host", status_code=303)
    # Secure when reached over https (behind TLS, uvicorn takes the scheme from the X-Forwarded-Proto
    # of a proxy named by --trusted-proxies): the session then never goes over plain http; over http it must not be set
    secure = request.url.scheme == "https"
    response.set_cookie(COOKIE, host.open(), httponly=True, samesite="strict", path="/", secure=secure)
    return response


async def logout(request: Request) -> Response:
    await _form(request)
    sessions(request).close(request.cookies.get(COOKIE, ""))
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, path="/", secure=request.url.scheme == "https", httponly=True, samesite="strict")
    return response


async def dashboard(
    request: Request,
    message: str = "",
    error: str = "",
    tokens: list[list[str]] | None = None,
    form: Any = None,
    edit: dict[str, Any] | None = None,
) -> Response:
    """``form``: a refused form's fields, shown again in it (the host typed them once); ``edit``: a
    refused edit form's, with the ``ladder`` it edits."""
    host = sessions(request)
    if not host.signed_in(request):
        return RedirectResponse("/host/login", status_code=303)
    api = api_of(request)
    ladders = await api.ladders()
    boards = await asyncio.gather(*(api.leaderboard(ladder.name) for ladder in ladders))
    try:
        revoked, unread = views.revoked_rows(await api.host_agents(host.host_token)), ""
    except ApiError as refused:  # the rest of the page is still the host's to use
        revoked, unread = [], f"the agents could not be read: {refused.message}"
    done, done_ladder = request.query_params.get("done", ""), request.query_params.get("ladder", "")
    note = host.take_note(request)
    if not (message or error) and _done_holds(done, done_ladder, ladders):
        message = note if done == "updated" and note else DONE[done].format(done_ladder)
    return page(
        request,
        "host.html",
        status_code=400 if error else 200,
        csrf=host.csrf(request),
        ladders=[
            {
                **views.ladder_row(ladder, board),
                "standings": [views.standing_row(s) for s in board],
                "settings": _shown_settings(ladder, edit),
            }
            for ladder, board in zip(ladders, boards, strict=True)
        ],
        revoked=revoked,
        revoked_unread=unread,
        revoked_ids={row["agent_id"] for row in revoked},
        presets=sorted(PRESETS),
        bots=sorted(BOT_FACTORIES),
        name_rule=AGENT_NAME_RULE,
        ladder_name_rule=LADDER_NAME_RULE,
        message=message,
        error=error,
        tokens=tokens,
        tokens_href=_csv_href(tokens) if tokens else "",
        form={key: value for key, value in (form or {}).items() if isinstance(value, str)},
        edit_open=(edit or {}).get("ladder", ""),
    )


def _shown_settings(ladder: pb.Ladder, edit: dict[str, Any] | None) -> dict[str, str]:
    """The values of a ladder's edit form: what the host typed if it was refused, else the ladder's."""
    if edit is not None and edit.get("ladder") == ladder.name:
        return {key: value for key, value in edit.items() if isinstance(value, str)}
    return {
        "preset": ladder.rules.preset,
        "seats": str(ladder.seats),
        "house_bots": ",".join(ladder.house_bots),
        "fill_after_seconds": _number_text(ladder.fill_after_seconds),
        "entry": entry_text(ladder),
        "base_window": _number_text(ladder.base_window),
        "widen_per_second": _number_text(ladder.widen_per_second),
    }


def _number_text(number: float) -> str:
    """A double as a form shows it, read back as the same number ("10", "2.5", "0.1")."""
    return repr(number).removesuffix(".0")


def ladder_from_form(form: Any) -> pb.Ladder:
    """The host page's new ladder; ValueError naming the field (as the form labels it) that is not a number."""
    ladder = pb.Ladder(name=str(form.get("name", "")).strip(), seats=4, entry=pb.LADDER_ENTRY_HOST)
    apply_settings({"preset": "classic", "fill_after_seconds": "0", **form}, ladder)
    return ladder


def apply_settings(form: Any, ladder: pb.Ladder) -> None:
    """Set the settings the form gives (create's and edit's fields) on ``ladder``, leaving the rest;
    ValueError naming the field, as the form labels it, whose value is refused. A preset other than the
    ladder's replaces its rules with that preset's (as `ohell ladder update --rules`); the same keeps its options."""
    if "seats" in form:
        seats_text = str(form["seats"]).strip()
        try:
            ladder.seats = int(seats_text)
            if not 0 <= ladder.seats <= UINT32:  # what the request's field holds (the matchmaker says 3 to 7)
                raise ValueError(seats_text)
        except ValueError:
            raise ValueError(f"seats: {seats_text[:20]!r} is not a whole number from 3 to 7") from None
    if "fill_after_seconds" in form:
        ladder.fill_after_seconds = _number(form, "fill_after_seconds", "fill after", "is not a number of seconds")
    for field, label in WINDOW_FIELDS.items():
        if field in form:
            setattr(ladder, field, _number(form, field, label, "is not a number from 0 up (0: the default)"))
    if "house_bots" in form:
        bots = [b.strip() for b in str(form["house_bots"]).split(",") if b.strip() and b.strip() != "none"]
        if bots != list(ladder.house_bots):  # the same bots: a ladder made over the RPC keeps its house_fill
            ladder.ClearField("house_bots")
            ladder.house_bots.extend(bots)
            ladder.house_fill = bool(bots)  # as `ohell ladder create --house-bots`: bots never filling never play
    if "entry" in form:
        entry_text = str(form["entry"]).strip() or "host"
        if entry_text not in ENTRY_NAMES:
            raise ValueError(f"entry: {entry_text[:20]!r} is not host or open")
        ladder.entry = ENTRY_NAMES[entry_text]
    preset = str(form.get("preset", "")).strip()
    if preset and preset != ladder.rules.preset:
        ladder.rules.CopyFrom(rules_pb2.Rules(preset=preset))


# the matchmaking window's settings of the edit form, as it labels them
WINDOW_FIELDS = {"base_window": "base window", "widen_per_second": "widen per second"}


def _number(form: Any, field: str, label: str, refusal: str) -> float:
    text = str(form[field]).strip() or "0"
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{label}: {text[:20]!r} {refusal}")
    return number


async def create_ladder(request: Request) -> Response:
    form = await _form(request)
    try:
        ladder = ladder_from_form(form)
    except ValueError as error:
        return await dashboard(request, error=f"ladder not created: {error}", form=form)
    try:
        created = await api_of(request).create_ladder(sessions(request).host_token, ladder)
    except ApiError as error:
        return await dashboard(request, error=f"ladder not created: {error.message}", form=form)
    return _done(created.name, "created")


async def update_ladder(request: Request) -> Response:
    """The edit form of a ladder: its definition as the matchmaker has it, with the form's settings
    changed, sent back whole (UpdateLadder), as `ohell ladder update` does. A change made by someone
    else between the two calls is overwritten."""
    form = await _form(request)
    name, api = request.path_params["ladder"], api_of(request)
    edit = {**form, "ladder": name}
    try:
        current = (await api.ladder(name)).ladder
    except ApiError as error:
        return await dashboard(request, error=f"ladder {name} not updated: {error.message}")
    current.ClearField("paused")  # read only: pause and resume change it
    ladder = pb.Ladder()
    ladder.CopyFrom(current)
    try:
        apply_settings(form, ladder)
    except ValueError as error:
        return await dashboard(request, error=f"ladder {name} not updated: {error}", edit=edit)
    if ladder == current:
        return _done(name, "unchanged")
    try:
        updated = await api.update_ladder(sessions(request).host_token, ladder)
    except ApiError as error:
        return await dashboard(request, error=f"ladder {name} not updated: {error.message}", edit=edit)
    said = "; ".join(changes(current, updated))
    sessions(request).note(request, f"ladder {name} updated: {said}; the tables formed from now on follow it")
    return _done(name, "updated")


async def ladder_action(request: Request) -> Response:
    form = await _form(request)
    name, action = request.path_params["ladder"], request.path_params["action"]
    methods = {"pause": "PauseLadder", "resume": "ResumeLadder", "delete": "DeleteLadder"}
    if action not in methods:
        raise HTTPException(404, f"no ladder action {action!r}")
    if action == "delete" and form.get("confirm") != name:
        return await dashboard(request, error=f"type the ladder's name ({name}) to delete it")
    try:
        await api_of(request).admin(sessions(request).host_token, methods[action], name=name)
    except ApiError as error:
        return await dashboard(request, error=f"{action} {name}: {error.message}")
    return _done(name, "deleted" if action == "delete" else action)


# what the host page says after a ladder form that worked, by the ``done`` of its address
DONE = {
    "created": "ladder {} created",
    "pause": "ladder {}: pause done",
    "resume": "ladder {}: resume done",
    "deleted": "ladder {} deleted: its matches stay readable by match id",
    "updated": "ladder {} updated",
    "unchanged": "ladder {} unchanged: it has these settings already",
}


def _done_holds(done: str, name: str, ladders: list[pb.Ladder]) -> bool:
    """Whether the page's ladders bear out the ``done`` of its address: a deleted ladder is not
    among them; any other is, paused after a pause and running after a resume (the address alone
    said 'pause done' of a running ladder)."""
    if done not in DONE:
        return False
    ladder = next((ladder for ladder in ladders if ladder.name == name), None)
    if done == "deleted":  # a name a ladder could have had: no other text of the address reaches the page
        return ladder is None and LADDER_NAME.fullmatch(name) is not None
    if ladder is None:
        return False
    return done not in ("pause", "resume") or ladder.paused == (done == "pause")


def _done(ladder: str, done: str) -> Response:
    """Back to the host page, which says what was done: reloading it sends no form again (the page
    had been the form's answer, at the form's address: a reload asked to post it again, and a
    visit to that address later was a 405)."""
    return RedirectResponse("/host?" + urlencode({"done": done, "ladder": ladder}), status_code=303)


async def agent_names(form: Any) -> list[str]:
    names = [n.strip() for line in str(form.get("names", "")).splitlines() for n in line.split(",") if n.strip()]
    upload = form.get("csv")
    if isinstance(upload, UploadFile) and upload.filename:
        data = await upload.read(MAX_CSV_BYTES + 1)
        if len(data) > MAX_CSV_BYTES:
            raise ValueError(f"the CSV is over {MAX_CSV_BYTES // 1024} KiB")
        try:
            text = roster_text(data)
        except UnicodeDecodeError as error:  # replaced, its bytes made every name a mangled one
            raise ValueError(
                f"the CSV {upload.filename[:100]} is not UTF-8 text (byte {error.start}): save it as CSV UTF-8"
            ) from None
        from_file = names_from_csv(text)
        if not (names or from_file):  # said of the file: a header row alone was 'give at least one agent name'
            holds = "a header row and no names under it" if first_cells(text) else "no names"
            raise ValueError(
                f"the CSV {upload.filename[:100]} has {holds}: give one agent name per row, in the first column"
            )
        names += from_file
    return names


def names_from_csv(text: str) -> list[str]:
    """The names of an uploaded import file (arena.ladder.roster: the first column; columns separated
    by ',', ';' or a tab). ValueError for a text the CSV reader refuses (a field over its limit of 128 KB)."""
    try:
        return roster_names(text)
    except csv.Error as error:
        raise ValueError(f"the CSV cannot be read: {error}") from None


async def register_agents(request: Request) -> Response:
    form = await _form(request)
    try:
        names = await agent_names(form)
    except ValueError as error:
        return await dashboard(request, error=str(error), form=form)
    kind, bot = str(form.get("kind", "connected")), str(form.get("bot", ""))
    refused = ""
    if not names:
        refused = "give at least one agent name (or a CSV of names)"
    elif len(names) > MAX_AGENTS_PER_FORM:
        refused = f"{len(names)} names: at most {MAX_AGENTS_PER_FORM} at a time"
    elif kind not in KINDS:
        refused = f"kind {kind!r}: choose connected, builtin or endpoint"
    elif bot and kind != "builtin":  # the matchmaker refuses it too, but once per name
        refused = f"bot {bot[:40]!r} is for builtin agents only: a {kind} agent plays its own bot; nobody registered"
    join = str(form.get("join", ""))
    if join and kind != "builtin" and not refused:
        refused = f"only built-in agents are queued by the host: a {kind} agent queues itself"
    if refused:
        return await dashboard(request, error=refused, form=form)
    api, token = api_of(request), sessions(request).host_token
    if join:  # as `ohell agent register --join`: refused before anyone is registered
        try:
            await api.ladder(join)
        except ApiError as error:
            error_text = f"queue on ladder {join}: {error.message}; nobody registered"
            return await dashboard(request, error=error_text, form=form)
    tokens, failed, queued_count = [], [], 0
    for name in names:
        try:
            reply = await api.register_agent(token, name, KINDS[kind], bot=bot, endpoint=str(form.get("endpoint", "")))
        except ApiError as error:
            failed.append(f"{name}: {error.message}")
            continue
        tokens.append([reply.agent.name, reply.agent.agent_id, reply.token])
        if join:
            try:
                await api.join_queue(reply.token, join, reply.agent.agent_id)
                queued_count += 1
            except ApiError as error:  # registered (its token is below) but not queued
                failed.append(f"{name}: registered, not queued on ladder {join}: {error.message}")
    queued = ""
    if join and tokens:
        some = "" if queued_count == len(tokens) else f"{queued_count} of them "
        queued = f", {some}queued on ladder {join}"
    message = f"registered {len(tokens)} agent(s){queued}; download their tokens now: they are not shown again"
    kept = None if tokens else form  # nobody registered: the names are offered again; else the failed ones are said
    return await dashboard(
        request, message=message if tokens else "", error="; ".join(failed), tokens=tokens, form=kept
    )


def _csv_href(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "agent_id", "token"])
    writer.writerows(rows)
    return "data:text/csv;base64," + base64.b64encode(out.getvalue().encode()).decode()


def routes() -> list[Route]:
    return [
        Route("/host/login", login, methods=["GET", "POST"]),
        Route("/host/logout", logout, methods=["POST"]),
        Route("/host", dashboard),
        Route("/host/ladders", create_ladder, methods=["POST"]),
        Route("/host/ladders/{ladder}/settings", update_ladder, methods=["POST"]),
        Route("/host/ladders/{ladder}/{action}", ladder_action, methods=["POST"]),
        Route("/host/agents", register_agents, methods=["POST"]),
    ]
