"""The host's session cookie as a browser gets it (the app in this process; no service is reached:
signing in and out ask none): its flags over http and https, a CSRF token tied to its session, a
signed-out session gone at the server."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.exceptions import StarletteDeprecationWarning
from starlette.requests import Request

from services.web.api import Api
from services.web.app import create_app
from services.web.host import COOKIE

with warnings.catch_warnings():  # Starlette would have httpx2 for its test client; httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

TOKEN = "host-secret"


@pytest.fixture
def app() -> Iterator[object]:
    yield create_app(Api("127.0.0.1:1"), host_token=TOKEN)


def signed_in(client: TestClient) -> str:
    """Sign in; the session cookie's Set-Cookie header."""
    answer = client.post("/host/login", data={"token": TOKEN}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return answer.headers["set-cookie"]


def host_page_opens(client: TestClient) -> bool:
    """Whether /host takes the client's cookie as a session (it redirects to the sign-in otherwise; with
    one, it asks the matchmaker, which is not there)."""
    return client.get("/host", follow_redirects=False).status_code != 303


def session_of(client: TestClient) -> str:
    return next(cookie.value for cookie in client.cookies.jar if cookie.name == COOKIE and cookie.value)


def csrf_of(client: TestClient) -> str:
    """The CSRF token the server keeps for the client's session (what its forms carry)."""
    request = Request({"type": "http", "headers": [(b"cookie", f"{COOKIE}={session_of(client)}".encode())]})
    return str(client.app.state.host.csrf(request))  # type: ignore[attr-defined]


def keep_only(client: TestClient, session: str) -> None:
    """The browser holds this session cookie and no other."""
    client.cookies.clear()
    client.cookies.set(COOKIE, session)


def test_the_session_cookie_is_secure_when_the_app_is_reached_over_https(app: object) -> None:
    """Behind TLS (uvicorn takes the scheme from a trusted proxy's X-Forwarded-Proto) the cookie holding
    the host's session must never go over plain http; over http (``ohell up`` on 127.0.0.1) a Secure
    cookie would not come back, so it is set without the flag there."""
    with TestClient(app, base_url="https://arena.example") as client:  # type: ignore[arg-type]
        cookie = signed_in(client)
        assert "secure" in cookie.lower() and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        assert host_page_opens(client)
    with TestClient(app, base_url="http://127.0.0.1") as client:  # type: ignore[arg-type]
        cookie = signed_in(client)
        assert "secure" not in cookie.lower() and "httponly" in cookie.lower()
        assert host_page_opens(client)


def test_a_csrf_token_of_one_session_is_refused_in_another(app: object) -> None:
    with TestClient(app) as first, TestClient(app) as second:  # type: ignore[arg-type]
        signed_in(first)
        signed_in(second)
        stolen = csrf_of(first)
        answer = second.post("/host/logout", data={"csrf": stolen}, follow_redirects=False)
        assert answer.status_code == 403 and host_page_opens(second)
        assert second.post("/host/logout", data={"csrf": csrf_of(second)}, follow_redirects=False).status_code == 303


def test_a_signed_out_session_is_gone_at_the_server_not_only_in_the_browser(app: object) -> None:
    with TestClient(app) as client:  # type: ignore[arg-type]
        signed_in(client)
        session, csrf = session_of(client), csrf_of(client)
        assert client.post("/host/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
        assert not host_page_opens(client)
        keep_only(client, session)  # the old cookie, kept by whoever copied it
        assert not host_page_opens(client)
        assert client.post("/host/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 403


def test_signing_in_gives_a_new_session_whatever_cookie_the_browser_brought(app: object) -> None:
    """No fixation: a session id planted in the browser before sign-in is not the one signed in."""
    with TestClient(app) as client:  # type: ignore[arg-type]
        keep_only(client, "planted-by-someone")
        assert not host_page_opens(client)
        signed_in(client)
        keep_only(client, "planted-by-someone")
        assert not host_page_opens(client)


def test_a_page_the_signed_in_host_gets_is_not_stored_by_the_browser(app: object) -> None:
    """The host's pages hold the session's CSRF token and, right after agents are registered, their
    tokens (shown once): on a shared computer, Back after signing out must not show them again
    from the browser's cache. A visitor's pages may be cached as before."""
    with TestClient(app) as client:  # type: ignore[arg-type]
        assert "no-store" not in client.get("/host/login").headers.get("cache-control", "")
        signed_in(client)
        assert client.get("/host/login").headers["cache-control"] == "no-store"
        failed = client.get("/tournaments/t1")  # an error page (no matchmaker here) is a page too
        assert failed.status_code >= 500 and failed.headers["cache-control"] == "no-store"


def test_a_fault_of_the_app_carries_the_security_headers_and_no_details(app: Starlette) -> None:
    """Starlette answers an unhandled error outside every middleware: its 500 carried none of the
    headers every other answer has (docs/operations.md said every answer did)."""

    async def broken(request: Request) -> None:
        raise RuntimeError("secret detail of the failure")

    app.add_route("/broken", broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        reply = client.get("/broken")
    assert reply.status_code == 500 and "secret detail" not in reply.text
    assert reply.headers["x-frame-options"] == "DENY" and reply.headers["x-content-type-options"] == "nosniff"
