"""The host's sign-in (services/web/host.py, services/web/sign_in.py) under strangers' wrong guesses,
the web app in its own process (port 0), nothing behind it. Wrong host tokens are limited per
address and for everyone together; the right one signs in at any time. Behind a proxy not named
by ``--trusted-proxies`` every visitor has the proxy's address (here every request comes from
127.0.0.1): before, a stranger's wrong guesses (1 every 5 s was enough) or its use of the address's
share of requests held the host out of the host pages."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from services.web.host import COOKIE
from services.web.sign_in import WrongTokens

from .conftest import HOST_TOKEN, start_web

NOWHERE = SimpleNamespace(matchmaker_address="127.0.0.1:9", engine_address="127.0.0.1:9")
PER_ADDRESS, EVERYONE = 10, 30  # wrong tokens at once (services/web/sign_in.py, docs/operations.md)


class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@contextmanager
def web_app(log: Path, **env: str) -> Iterator[str]:
    settings = {k: v for k, v in os.environ.items() if k not in ("OHELL_WEB_TRUSTED_PROXIES", "FORWARDED_ALLOW_IPS")}
    process, address = start_web(NOWHERE, log, settings | {"OHELL_HOST_TOKEN": HOST_TOKEN} | env)  # type: ignore[arg-type]
    try:
        yield address
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with web_app(tmp_path / "web.log", OHELL_WEB_RATE_LIMIT="1000:1000") as address:
        yield address


def get(url: str, path: str, headers: dict[str, str] | None = None) -> int:
    try:
        with urllib.request.build_opener(Stay).open(urllib.request.Request(url + path, headers=headers or {})) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def sign_in(url: str, token: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(status, Retry-After or the session cookie's Set-Cookie, body) of a sign-in (its redirect not followed)."""
    form = urllib.parse.urlencode({"token": token}).encode()
    request = urllib.request.Request(f"{url}/host/login", form, headers=headers or {})
    try:
        with urllib.request.build_opener(Stay).open(request, timeout=30) as reply:
            return int(reply.status), "", ""
    except urllib.error.HTTPError as error:
        kept = error.headers.get("set-cookie" if error.code == 303 else "retry-after", "")
        return int(error.code), kept, error.read().decode()


def test_wrong_guesses_are_limited_and_never_keep_the_host_out(url: str) -> None:
    guesses = [sign_in(url, f"guess-{n:012d}") for n in range(PER_ADDRESS)]
    assert {status for status, _, _ in guesses} == {403}
    status, retry_after, body = sign_in(url, "one-guess-too-many")
    assert status == 429 and int(retry_after) >= 1 and "too many sign-in attempts" in body
    status, cookie, _ = sign_in(url, HOST_TOKEN)  # from the same address, the limit used up
    assert status == 303 and cookie.startswith(f"{COOKIE}=") and "httponly" in cookie.lower()
    assert sign_in(url, HOST_TOKEN + "x")[0] == 429 and sign_in(url, "")[0] == 429  # still limited
    assert get(url, "/host/login") == 200


def test_wrong_guesses_from_many_addresses_meet_one_limit_and_one_log_line(tmp_path: Path) -> None:
    """Behind a proxy that is named each visitor has its own limit; all of them together have one,
    and the log says of a flood one line a minute, not one per guess: the first guess at once, the
    rest of the minute's when it ends, here when the app stops (before, never: a flood that stopped
    within its minute was said to be one guess)."""
    log = tmp_path / "web.log"
    with web_app(log, OHELL_WEB_TRUSTED_PROXIES="127.0.0.1") as url:
        # the shared limit also lets one more through each second: counted by the time the guesses took
        began, statuses = time.monotonic(), []
        while 429 not in statuses and len(statuses) < 5 * EVERYONE:
            statuses.append(sign_in(url, "wrong", {"x-forwarded-for": f"203.0.113.{len(statuses) % 250}"})[0])
        refilled = math.ceil(time.monotonic() - began)
        assert statuses[-1] == 429 and set(statuses[:-1]) == {403}, statuses
        assert EVERYONE <= len(statuses) - 1 <= EVERYONE + refilled, (len(statuses), refilled)
        assert sign_in(url, HOST_TOKEN, {"x-forwarded-for": "198.51.100.1"})[0] == 303
    lines = [line for line in log.read_text().splitlines() if "wrong host token" in line]
    assert lines[0] == "host sign-in: 1 wrong host token(s), the latest from '203.0.113.0'", lines
    said = [
        re.fullmatch(r"host sign-in: (\d+) wrong host token\(s\) in the last \d+ s, the latest from '(.*)'", line)
        for line in lines[1:]
    ]
    assert said and all(said), lines
    assert 1 + sum(int(line[1]) for line in said if line) == len(statuses), (lines, len(statuses))
    assert said[-1] and said[-1][2] == f"203.0.113.{(len(statuses) - 1) % 250}", lines


def test_the_wrong_tokens_of_a_minute_are_logged_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    """One at once, the three after it when the (here 0.2 s) minute ends, with no further guess."""
    tokens = WrongTokens(log_every_s=0.2)

    async def flood() -> None:
        for n in range(4):
            tokens.wait_ms(f"198.51.100.{n}")
        deadline = time.monotonic() + 20
        while len(caplog.messages) < 2:
            assert time.monotonic() < deadline, caplog.messages
            await asyncio.sleep(0.02)

    with caplog.at_level(logging.WARNING, "services.web.sign_in"):
        asyncio.run(flood())
    assert caplog.messages[0] == "host sign-in: 1 wrong host token(s), the latest from '198.51.100.0'"
    assert re.fullmatch(
        r"host sign-in: 3 wrong host token\(s\) in the last 0 s, the latest from '198.51.100.3'", caplog.messages[1]
    )
    tokens.wait_ms("198.51.100.9")  # outside an event loop: said at once, or when the app stops
    tokens.close()
    assert len(caplog.messages) == 3, caplog.messages
    assert re.fullmatch(
        r"host sign-in: 1 wrong host token\(s\) in the last \d+ s, the latest from '198.51.100.9'", caplog.messages[2]
    )


def test_a_stranger_using_up_the_address_leaves_the_host_its_pages(tmp_path: Path) -> None:
    """Each visitor 2 requests, then 1 every 100 s; every request from 127.0.0.1 (a proxy's address)."""
    with web_app(tmp_path / "web.log", OHELL_WEB_RATE_LIMIT="0.01:2") as url:
        assert [get(url, "/nothing") for _ in range(3)] == [404, 404, 429]  # the stranger's share is gone
        assert get(url, "/host/login") == 200
        status, cookie, _ = sign_in(url, HOST_TOKEN)
        assert status == 303
        session = {"cookie": cookie.split(";")[0]}
        # the host's pages count as its session's share (the matchmaker is not there: 503, not 429)
        assert [get(url, "/host", session), get(url, "/nothing", session), get(url, "/host", session)] == [
            503,
            404,
            429,
        ]
        assert get(url, "/nothing", {"cookie": f"{COOKIE}=forged"}) == 429 and get(url, "/nothing") == 429


def test_a_host_token_too_short_to_stand_against_guessing_stops_the_start(tmp_path: Path) -> None:
    env = dict(os.environ) | {"OHELL_HOST_TOKEN": "short-token"}
    command = [sys.executable, "-m", "services.web", "--address", "127.0.0.1:0", "--matchmaker", "127.0.0.1:9"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode != 0 and done.stderr.strip() == "the host token must be at least 16 characters", done.stderr
