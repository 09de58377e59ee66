"""The web app when the matchmaker refuses or fails its calls, on real processes (redis-server,
matchmaker, engine, the web app under uvicorn with the web app's token limited to one call every
two seconds): names that could not be read are asked again, and a refused page is a 429 with
Retry-After, not a 502. The status of each gRPC code is pure logic."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.local.admin_client import deadline as cli_deadline
from arena.local.stack import Stack
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import WEB_TOKEN_ENV
from arena.rpc.ratelimit import WEB_APP_RATE_ENV
from arena.tournament.model import CREATE_DEADLINE_S
from services.web import api as web_api
from services.web.api import MAX_UNNAMED, NAME_RETRY_S, TIMEOUT_S, Api, ApiError
from services.web.api import deadline as web_deadline
from services.web.errors import error_page
from services.web.tournaments import creation_failed

from .test_service_budget import public_site

RETRY_AFTER_S = 2.2  # the web app's token gets a call back every 2 s


def refill(stack: Stack) -> None:
    """Every caller's limit at the stack's services starts full again (its state in Redis deleted),
    where the test waited for the web app's token to get its one call back (every 2 s)."""
    client = redis.Redis.from_url(stack.redis_url)
    try:
        for key in client.scan_iter(Keys(stack.config.prefix).rate_limit("*")):
            client.delete(key)
    finally:
        client.close()


def register(stub: Any, host: Any) -> None:
    for name in ("ann", "ben"):
        request = pb.RegisterAgentRequest(name=name, kind=pb.AGENT_KIND_BUILTIN, bot="random")
        stub.RegisterAgent(request, metadata=host)


@pytest.fixture(scope="module")
def slow_site(
    shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Stack]]:
    logs = tmp_path_factory.mktemp("web-refused")
    with public_site(shared_redis_server.url, logs, "refused", {WEB_APP_RATE_ENV: "0.5:1"}, register) as s:
        yield s


def agent_ids(stack: Stack) -> dict[str, str]:
    """name -> agent id, read with the host token (not limited)."""
    api = Api(stack.matchmaker_address)

    async def read() -> dict[str, str]:
        try:
            reply = await api.admin(stack.host_token, "ListAgents")
            return {agent.name: agent.agent_id for agent in reply.agents}
        finally:
            await api.close()

    return asyncio.run(read())


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_a_name_refused_once_is_asked_again(slow_site: tuple[str, Stack]) -> None:
    """The matchmaker refuses the second lookup (RESOURCE_EXHAUSTED, retry after 2 s): that agent shows
    as its id on that page, and by its name once the matchmaker answers again (not for ever)."""
    _, stack = slow_site
    ids = agent_ids(stack)
    refill(stack)
    api = Api(stack.matchmaker_address, read_token=stack.env()[WEB_TOKEN_ENV])

    async def look_up() -> list[dict[str, str]]:
        try:
            first = await api.names([ids["ann"]])
            refused = await api.names([ids["ben"]])
            await asyncio.sleep(RETRY_AFTER_S)  # the web app asks again after the refusal's retry-after
            return [first, refused, await api.names([ids["ben"]])]
        finally:
            await api.close()

    first, refused, later = asyncio.run(look_up())
    assert first == {ids["ann"]: "ann"}
    assert refused == {ids["ben"]: ids["ben"]}
    assert later == {ids["ben"]: "ben"}


def visit(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return int(reply.status), dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), dict(error.headers), error.read().decode()


def test_a_refused_page_is_429_with_retry_after(slow_site: tuple[str, Stack]) -> None:
    url, stack = slow_site
    refill(stack)
    assert visit(f"{url}/")[0] == 200  # the token's one call
    status, headers, body = visit(f"{url}/")
    assert status == 429, body
    assert 1 <= int(headers["retry-after"]) <= 2
    assert "the arena is busy" in body and 'id="error-message"' in body


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("RESOURCE_EXHAUSTED", 429),
        ("DEADLINE_EXCEEDED", 504),
        ("PERMISSION_DENIED", 403),
        ("UNAUTHENTICATED", 401),
        ("NOT_FOUND", 404),
        ("INVALID_ARGUMENT", 400),
        ("UNAVAILABLE", 503),
        ("INTERNAL", 502),
    ],
)
def test_each_code_has_its_status(code: str, status: int) -> None:
    assert error_page(ApiError(code, "x")).status == status


def test_internals_are_not_shown() -> None:
    """Redis lost, a database URL, a traceback: the visitor reads a plain sentence instead; a request's
    own fault keeps the matchmaker's words."""
    for code in ("UNAVAILABLE", "INTERNAL", "UNKNOWN", "DEADLINE_EXCEEDED", "PERMISSION_DENIED"):
        shown = error_page(ApiError(code, "redis://10.0.0.5:6379 Traceback ..."))
        assert "redis" not in shown.message and "Traceback" not in shown.message
    assert error_page(ApiError("NOT_FOUND", "no match m-1")).message == "no match m-1"
    refused = error_page(ApiError("RESOURCE_EXHAUSTED", "slow down", retry_after_s=0.25))
    assert refused.retry_after == "1"
    assert error_page(ApiError("RESOURCE_EXHAUSTED", "slow down")).retry_after == ""


def test_creating_a_tournament_waits_for_the_largest_one() -> None:
    """The web app waited 10 s for CreateTournament (the CLI 30 s), and 200 entrants at 3 seats took
    15.7 s: the host page said DEADLINE_EXCEEDED for a tournament that was created, and a second try
    ALREADY_EXISTS. The page now names both cases."""
    assert web_deadline("CreateTournament") == cli_deadline("CreateTournament") == CREATE_DEADLINE_S >= 60
    assert web_deadline("GetTournament") == TIMEOUT_S
    late = creation_failed(ApiError("DEADLINE_EXCEEDED", "Deadline Exceeded"), "big")
    assert "may still be creating it" in late and "120 s" in late
    again = creation_failed(ApiError("ALREADY_EXISTS", "tournament 'big' exists already"), "big")
    assert "big exists already" in again and "/tournaments/big" in again
    refused = creation_failed(ApiError("INVALID_ARGUMENT", "seats: 9 is not from 3 to 7"), "big")
    assert refused == "tournament not created: seats: 9 is not from 3 to 7"  # it led with INVALID_ARGUMENT


def test_the_ids_no_agent_has_are_not_kept_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    """The match list's agent filter asks the name of the id a visitor gives (its heading names the
    agent): each id no agent has stayed in the app's memory for good, waiting to be asked again, so
    a visitor typing new ids grew the web app without bound. Pure logic: the matchmaker's refusal
    is a stand-in."""

    class NoAgents(Api):
        async def _call(self, method: str, request: Any, token: str = "") -> Any:
            raise ApiError("NOT_FOUND", f"agent_id: no agent {request.agent_id!r}")

    clock = [1000.0]
    monkeypatch.setattr(web_api.time, "monotonic", lambda: clock[0])
    api = NoAgents("127.0.0.1:9", "127.0.0.1:9")

    async def ask(ids: list[str]) -> dict[str, str]:
        return await api.names(ids)

    for second in range(30):
        clock[0] += 1.0
        names = asyncio.run(ask([f"visitor-{second}-{n}" for n in range(100)]))
        assert names[f"visitor-{second}-0"] == f"visitor-{second}-0"
    assert len(api._unnamed) <= MAX_UNNAMED  # of the 3000 asked
    assert all(until > clock[0] - NAME_RETRY_S - 1 for until in api._unnamed.values())


def test_the_ids_no_agent_has_are_bounded_within_one_wait_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the ids whose wait was over were forgotten past MAX_UNNAMED: 3,000 ids typed within one
    wait of NAME_RETRY_S were all kept. Past the cap those whose wait ends first go (the latest stay,
    not asked again before their wait is over)."""
    asked: list[str] = []

    class NoAgents(Api):
        async def _call(self, method: str, request: Any, token: str = "") -> Any:
            asked.append(request.agent_id)
            raise ApiError("NOT_FOUND", f"agent_id: no agent {request.agent_id!r}")

    clock = [1000.0]
    monkeypatch.setattr(web_api.time, "monotonic", lambda: clock[0])
    api = NoAgents("127.0.0.1:9", "127.0.0.1:9")
    for batch in range(30):
        clock[0] += 0.01
        asyncio.run(api.names([f"visitor-{batch}-{n}" for n in range(100)]))
        assert len(api._unnamed) <= MAX_UNNAMED
    assert len(asked) == 3000
    latest = [f"visitor-29-{n}" for n in range(100)]
    asyncio.run(api.names(latest))
    assert len(asked) == 3000  # still waiting: not asked again
