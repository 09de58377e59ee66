"""What every page handler shares: the templates, the API client of the app, rendering a page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from services.web.api import Api

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
