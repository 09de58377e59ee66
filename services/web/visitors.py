"""Each visitor's share of the web app: requests per second, and live views and exports open at once.

The app reads the services with its own token (``OHELL_WEB_TOKEN``, limited there by
``arena.rpc.ratelimit.DEFAULT_WEB_APP_LIMIT``, sized for many visitors at this limit), else with the
host token (not limited), so that its visitors do not share one caller's budget; it limits each
visitor itself, by client address (an IPv6 address by its /64; taken from X-Forwarded-For only
when the peer is a proxy named by ``--trusted-proxies``: services/web/server.py). The limit is GCRA in this process
(``arena.rpc.ratelimit.LocalLimiter``); a refused request is answered 429 with ``Retry-After``.
Static files and /healthz are not counted. Nor is the host's sign-in page (``/host/login``: wrong
host tokens have their own limits there, which never refuse the right one), and a request of a
signed-in host counts as its session's, not its address's: behind a proxy not named by
``--trusted-proxies`` every visitor has the proxy's address, and a stranger using up that address's
share held the host out of the host pages.

``BodyLimit`` bounds what any request may send (the host's forms, a CSV of agent names included):
a body declared or found longer than ``MAX_BODY_BYTES`` (a sign-in's: ``MAX_SIGN_IN_BYTES``) is
answered 413 without reading it all, so an anonymous visitor cannot make the app spool gigabytes
before it refuses the request.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.rpc.ratelimit import LocalLimiter, RateLimit, network_of

WEB_RATE_ENV = "OHELL_WEB_RATE_LIMIT"  # "<requests per second>:<burst>" for each visitor
DEFAULT_VISITOR_LIMIT = RateLimit(rate=20.0, burst=60)
MAX_LIVE_PER_VISITOR = 4  # live views (server-sent events) and exports one visitor may hold open
UNCOUNTED = ("/static/", "/healthz")
SIGN_IN = "/host/login"  # not counted either (services.web.host.login limits wrong tokens itself)
MAX_BODY_BYTES = 512 * 1024  # the largest form: a CSV of agent names (services.web.host.MAX_CSV_BYTES) and its fields
MAX_SIGN_IN_BYTES = 4096  # a sign-in's form holds a token: this bounds what an uncounted request makes the app read


def held_open(path: str) -> bool:
    """Whether the request holds a stream from the services while its visitor reads: a live view,
    or a tournament's export (streamed from the matchmaker, which leaves the web app's token
    unbounded there)."""
    if path.startswith("/live/"):
        return path.endswith("/events")
    return path.startswith("/tournaments/") and path.rpartition("/")[2].startswith("export.")


class VisitorLimit:
    """ASGI middleware: per-visitor request rate and open live views. ``host_session(scope)``: the
    id of the signed-in host session the request carries, else None."""

    def __init__(
        self,
        app: ASGIApp,
        limit: RateLimit,
        max_live: int = MAX_LIVE_PER_VISITOR,
        host_session: Callable[[Scope], str | None] = lambda scope: None,
    ) -> None:
        self.app = app
        self.limiter = LocalLimiter(limit)
        self.max_live = max_live
        self.host_session = host_session
        self.live: dict[str, int] = {}  # visitor -> live views open

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(UNCOUNTED) or path == SIGN_IN:
            await self.app(scope, receive, send)
            return
        visitor = self.visitor(scope)
        wait_ms = self.limiter.wait_ms(visitor)
        if wait_ms > 0:
            seconds = max(1, math.ceil(wait_ms / 1000))
            refusal = PlainTextResponse(
                f"too many requests from {visitor}: retry after {seconds} s", 429, headers={"retry-after": str(seconds)}
            )
            await refusal(scope, receive, send)
            return
        if not held_open(path):
            await self.app(scope, receive, send)
            return
        if self.live.get(visitor, 0) >= self.max_live:
            refusal = PlainTextResponse(
                f"{self.max_live} live views or exports of yours are open: close one first", 429
            )
            await refusal(scope, receive, send)
            return
        self.live[visitor] = self.live.get(visitor, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.live[visitor] -= 1
            if not self.live[visitor]:
                del self.live[visitor]

    def visitor(self, scope: Scope) -> str:
        """Whose share the request takes: a signed-in host's session (only the host token opens
        one), else the client's address (an IPv6 one by its /64)."""
        session = self.host_session(scope)
        if session is not None:
            return f"host session {session}"
        client = (scope.get("client") or ("unknown", 0))[0]
        return network_of(client) or client


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes`` (``MAX_SIGN_IN_BYTES`` for a
    sign-in), declared (refused before the app runs) or counted as it arrives (the app's read of it
    fails with 413)."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes = min(self.max_bytes, MAX_SIGN_IN_BYTES) if scope.get("path") == SIGN_IN else self.max_bytes
        declared = dict(scope.get("headers") or ()).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > max_bytes:
            refusal = PlainTextResponse(f"request body over {max_bytes} bytes", 413, headers={"connection": "close"})
            await refusal(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > max_bytes:
                raise HTTPException(413, f"request body over {max_bytes} bytes")
            return message

        await self.app(scope, counted, send)
