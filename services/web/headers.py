"""Headers every answer of the web app carries, pages, errors, files and refusals alike: no other
site may frame it (a host's form under a decoy page: clickjacking), a browser takes each answer as
the type it is sent as (an agent's name in a record download is never sniffed into a page), forms
post only here, scripts come only from the app's own files, and a link to another site does not
pass on the page it was on."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADERS = {
    # scripts only from the app's own files (its pages carry no inline code), as a second wall behind
    # the templates' escaping: a name that slipped through as markup would still run nothing
    "content-security-policy": (
        "frame-ancestors 'none'; form-action 'self'; base-uri 'self'; object-src 'none'; "
        "script-src 'self'; connect-src 'self'"
    ),
    "x-frame-options": "DENY",  # frame-ancestors for browsers that predate it
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


class SecurityHeaders:
    """ASGI middleware: ``HEADERS`` on every HTTP response (one the app set itself is left as it is)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)
