"""The host's sign-in sessions (pure logic): the token check, the cap, expiry, sign-out."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from services.web import host
from services.web.host import COOKIE, HostSessions


def request_with(session: str) -> Request:
    return Request({"type": "http", "headers": [(b"cookie", f"{COOKIE}={session}".encode())]})


def test_token_check() -> None:
    assert HostSessions("s3cret").check_token("s3cret")
    assert not HostSessions("s3cret").check_token("s3cre")
    assert not HostSessions("").check_token("")  # no host token: nobody signs in


def test_sessions_are_capped_expire_and_close(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = HostSessions("t")
    first = sessions.open()
    assert sessions.signed_in(request_with(first)) and not sessions.signed_in(request_with("forged"))
    others = [sessions.open() for _ in range(host.MAX_SESSIONS)]
    assert not sessions.signed_in(request_with(first))  # the oldest went
    assert all(sessions.signed_in(request_with(s)) for s in others)
    sessions.close(others[0])
    assert not sessions.signed_in(request_with(others[0]))
    now = host.time.monotonic()
    monkeypatch.setattr(host.time, "monotonic", lambda: now + host.SESSION_S + 1)
    assert not sessions.signed_in(request_with(others[1]))
