"""What every page handler shares: the templates, the API client of the app, rendering a page (and
the replay viewer's page of a record, which ladder matches and tournament games share)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from services.web import views
from services.web.api import Api
from services.web.replay import replay

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def api_of(request: Request) -> Api:
    return request.app.state.api  # type: ignore[no-any-return]


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    context.setdefault("host_session", request.app.state.host.signed_in(request))
    response = templates.TemplateResponse(request, name, context, status_code=status_code)
    if context["host_session"]:  # the session's CSRF token, and the tokens of agents just registered
        response.headers["cache-control"] = "no-store"
    return response


def page_part(request: Request, name: str, **context: Any) -> Response:
    """A page's live part alone (its template's section #live), fetched again by static/live-part.js:
    never from a cache."""
    response = page(request, name, **context)
    response.headers["cache-control"] = "no-store"
    return response


def replay_page(
    request: Request,
    record: dict[str, Any],
    seats: list[views.Row],
    *,
    heading: str,
    back_href: str,
    back_label: str,
    record_href: str = "",
) -> Response:
    """The replay viewer of a finished game's record (a ladder's match, a tournament's game): its
    ``heading``, the page it belongs to (``back_href``, ``back_label``) and its record's address
    (``record_href``, '' for none). Each seat's ``href`` links its name ('' for none)."""
    viewer = replay(record)
    return page(
        request,
        "replay.html",
        record=record,
        rules=views.record_rules_label(record),
        seats=seats,
        replay_json=json.dumps(viewer, separators=(",", ":")).replace("<", "\\u003c"),  # inside <script>
        steps=len(viewer["frames"]),
        heading=heading,
        back_href=back_href,
        back_label=back_label,
        record_href=record_href,
    )
