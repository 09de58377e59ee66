"""Sign-in attempts are limited per visitor (services/web/host.py, ``SIGN_IN_LIMIT``): before, the
visitors' own limit let one address try 20 host tokens a second, 1.7 million a day. The web app's
own process (port 0), nothing behind it."""

from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from .conftest import HOST_TOKEN, start_web

BURST = 10  # services.web.host.SIGN_IN_LIMIT's


class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    nowhere = SimpleNamespace(matchmaker_address="127.0.0.1:9", engine_address="127.0.0.1:9")
    env = dict(os.environ) | {"OHELL_HOST_TOKEN": HOST_TOKEN, "OHELL_WEB_RATE_LIMIT": "1000:1000"}
    process, address = start_web(nowhere, tmp_path / "web.log", env)  # type: ignore[arg-type]
    yield address
    process.terminate()
    process.wait(10)


def sign_in(url: str, token: str) -> tuple[int, str, str]:
    """(status, Retry-After, body) of a sign-in (its redirect not followed)."""
    request = urllib.request.Request(f"{url}/host/login", urllib.parse.urlencode({"token": token}).encode())
    try:
        with urllib.request.build_opener(Stay).open(request, timeout=30) as reply:
            return int(reply.status), "", ""
    except urllib.error.HTTPError as error:
        return int(error.code), error.headers.get("retry-after", ""), error.read().decode()


def test_guessing_the_host_token_is_stopped_and_the_right_one_waits_too(url: str) -> None:
    guesses = [sign_in(url, f"guess-{n:012d}") for n in range(BURST)]
    assert {status for status, _, _ in guesses} == {403}
    status, retry_after, body = sign_in(url, "one-guess-too-many")
    assert status == 429 and int(retry_after) >= 1 and "too many sign-in attempts" in body
    # while limited the token is not even compared: a guess that would be right is refused alike
    assert sign_in(url, HOST_TOKEN)[0] == 429
    assert sign_in(url, "x")[0] == 429 and urllib.request.urlopen(f"{url}/host/login", timeout=30).status == 200
