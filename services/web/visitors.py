"""Each visitor's share of the web app: requests per second and live views open at once.

The app reads the services with its own token (``OHELL_WEB_TOKEN``, limited there by
``arena.rpc.ratelimit.DEFAULT_WEB_APP_LIMIT``, sized for many visitors at this limit), else with the
host token (not limited), so that its visitors do not share one caller's budget; it limits each
visitor itself, by client address (behind a reverse proxy
on this machine, uvicorn takes it from X-Forwarded-For). The limit is GCRA in this process
(``arena.rpc.ratelimit.LocalLimiter``); a refused request is answered 429 with ``Retry-After``.
Static files and /healthz are not counted.
"""

from __future__ import annotations

import math

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.rpc.ratelimit import LocalLimiter, RateLimit

WEB_RATE_ENV = "OHELL_WEB_RATE_LIMIT"  # "<requests per second>:<burst>" for each visitor
DEFAULT_VISITOR_LIMIT = RateLimit(rate=20.0, burst=60)
MAX_LIVE_PER_VISITOR = 4  # live views (server-sent events) one visitor may hold open
UNCOUNTED = ("/static/", "/healthz")


class VisitorLimit:
    """ASGI middleware: per-visitor request rate and open live views."""

    def __init__(self, app: ASGIApp, limit: RateLimit, max_live: int = MAX_LIVE_PER_VISITOR) -> None:
        self.app = app
        self.limiter = LocalLimiter(limit)
        self.max_live = max_live
        self.live: dict[str, int] = {}  # visitor -> live views open

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(UNCOUNTED):
            await self.app(scope, receive, send)
            return
        visitor = (scope.get("client") or ("unknown", 0))[0]
        wait_ms = self.limiter.wait_ms(visitor)
        if wait_ms > 0:
            seconds = max(1, math.ceil(wait_ms / 1000))
            refusal = PlainTextResponse(
                f"too many requests from {visitor}: retry after {seconds} s", 429, headers={"retry-after": str(seconds)}
            )
            await refusal(scope, receive, send)
            return
        if not (path.startswith("/live/") and path.endswith("/events")):
            await self.app(scope, receive, send)
            return
        if self.live.get(visitor, 0) >= self.max_live:
            refusal = PlainTextResponse(f"{self.max_live} live views of yours are open: close one first", 429)
            await refusal(scope, receive, send)
            return
        self.live[visitor] = self.live.get(visitor, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.live[visitor] -= 1
            if not self.live[visitor]:
                del self.live[visitor]
