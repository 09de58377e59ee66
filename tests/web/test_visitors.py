"""Each visitor's share of the web app (services/web/visitors.py), driven as ASGI: requests per
second by client address, live views open at once, static files and /healthz uncounted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.rpc.ratelimit import RateLimit
from services.web.visitors import DEFAULT_VISITOR_LIMIT, WEB_RATE_ENV, VisitorLimit


class Inner:
    """The app behind the limit: answers 200; a live view or an export stays open until ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"].endswith(("/events", "/export.csv", "/export.json")):
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def views_open(app: VisitorLimit, visitor: str, count: int) -> None:
    """Until ``visitor`` holds ``count`` live views (each held open by Inner)."""
    async with asyncio.timeout(10):
        while app.live.get(visitor, 0) != count:
            await asyncio.sleep(0)


async def visit(app: VisitorLimit, path: str, client: str = "10.0.0.1") -> tuple[int, dict[str, str]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "headers": [],
        "client": (client, 5000),
        "query_string": b"",
    }
    await app(scope, receive, send)
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start.get("headers", [])}


def test_a_visitor_over_its_rate_is_told_when_to_come_back_and_others_are_not() -> None:
    async def run() -> None:
        app = VisitorLimit(Inner(), RateLimit(rate=0.5, burst=3))
        assert [(await visit(app, "/ladders/main"))[0] for _ in range(3)] == [200, 200, 200]
        status, headers = await visit(app, "/ladders/main")
        assert status == 429 and int(headers["retry-after"]) >= 1
        assert (await visit(app, "/ladders/main", client="10.0.0.2"))[0] == 200
        for path in ("/static/app.css", "/healthz"):  # never counted, never refused
            assert (await visit(app, path))[0] == 200

    asyncio.run(run())


def test_a_visitor_holds_a_bounded_number_of_live_views() -> None:
    async def run() -> None:
        inner = Inner()
        app = VisitorLimit(inner, RateLimit(rate=1000, burst=1000), max_live=2)
        held = [asyncio.create_task(visit(app, f"/live/m{n}/events")) for n in range(2)]
        await views_open(app, "10.0.0.1", 2)
        assert (await visit(app, "/live/m3/events"))[0] == 429
        assert (await visit(app, "/matches"))[0] == 200  # pages still load
        other = asyncio.create_task(visit(app, "/live/m3/events", client="10.0.0.2"))
        await views_open(app, "10.0.0.2", 1)
        inner.release.set()
        assert [(await task)[0] for task in (*held, other)] == [200, 200, 200]
        assert (await visit(app, "/live/m4/events"))[0] == 200 and not app.live  # closed views are given back

    asyncio.run(run())


def test_the_limit_comes_from_the_environment_and_a_bad_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WEB_RATE_ENV, raising=False)
    assert RateLimit.from_env(WEB_RATE_ENV, DEFAULT_VISITOR_LIMIT) == DEFAULT_VISITOR_LIMIT
    monkeypatch.setenv(WEB_RATE_ENV, "5:10")
    assert RateLimit.from_env(WEB_RATE_ENV, DEFAULT_VISITOR_LIMIT) == RateLimit(5.0, 10)
    for bad in ("fast", "0:10", "5:x"):
        monkeypatch.setenv(WEB_RATE_ENV, bad)
        with pytest.raises(ValueError, match=WEB_RATE_ENV):
            RateLimit.from_env(WEB_RATE_ENV, DEFAULT_VISITOR_LIMIT)


def test_exports_count_as_live_views() -> None:
    """A tournament's export is streamed from the matchmaker as its visitor reads it: a visitor that
    opened exports without reading them held a matchmaker stream each, without bound (the web app's
    token has no share of its own there: the web app bounds its visitors)."""

    async def run() -> None:
        inner = Inner()
        app = VisitorLimit(inner, RateLimit(rate=1000, burst=1000), max_live=2)
        held = [asyncio.create_task(visit(app, "/tournaments/final/export.json")) for _ in range(2)]
        await views_open(app, "10.0.0.1", 2)
        for path in ("/tournaments/final/export.csv", "/live/m1/events"):  # refused at once, not held
            assert (await asyncio.wait_for(visit(app, path), 10))[0] == 429
        assert (await visit(app, "/tournaments/final"))[0] == 200  # its page still loads
        inner.release.set()
        assert [(await task)[0] for task in held] == [200, 200]
        assert not app.live

    asyncio.run(run())
