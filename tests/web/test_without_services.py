"""The web app's own answers, on its own process (port 0) with nothing behind it: what a visitor's
live view is told when the engine cannot be asked (the error page's plain words, never the gRPC
library's text naming the engine's address: an anonymous visitor learnt the internal host and port
from it), and a host form whose CSRF token is not ASCII (403, not a 500 from ``hmac.compare_digest``)."""

from __future__ import annotations

import html
import http.cookiejar
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from services.web.api import Api, ApiError
from services.web.app import create_app
from services.web.errors import PLAIN

from .conftest import HOST_TOKEN, start_web

with warnings.catch_warnings():  # as tests/web/test_host_cookies.py: httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

ENGINE = "127.0.0.1:9"  # nothing listens there: the call fails at once, UNAVAILABLE


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    nowhere = SimpleNamespace(matchmaker_address="127.0.0.1:9", engine_address=ENGINE)
    process, address = start_web(nowhere, Path(tmp_path_factory.mktemp("web")) / "web.log")  # type: ignore[arg-type]
    try:
        yield address
    finally:
        process.terminate()
        process.wait(10)


def test_a_live_view_that_cannot_reach_the_engine_names_no_internals(url: str) -> None:
    with urllib.request.urlopen(f"{url}/live/main-1/events", timeout=30) as reply:
        body = reply.read().decode()
    kind, data = [line.split(": ", 1)[1] for line in body.splitlines() if line][:2]
    assert kind == "failed" and json.loads(data) == {"code": "UNAVAILABLE", "error": PLAIN["UNAVAILABLE"]}, data


def test_a_live_view_without_a_feed_does_not_say_the_match_is_over(url: str, page: Any) -> None:
    """A match without a live feed (the engine out of reach, or built-in bots playing in a worker)
    was shown as "The match is over: watch its replay", while it played on; the replay link led back
    to this view, under an empty table of seats and scores. The error is said in words (it read
    "UNAVAILABLE: ...") and the replay's address is given for later."""
    page.goto(f"{url}/live/main-1")
    page.wait_for_selector("#later:not([hidden])")
    assert page.locator("#status").inner_text() == PLAIN["UNAVAILABLE"]
    assert page.locator("#done").is_hidden() and page.locator("#board").get_attribute("hidden") is not None
    assert page.locator("#later a").get_attribute("href") == "/matches/main-1"


@pytest.mark.parametrize(
    ("path", "status", "title", "message"),
    [
        ("/no/such/page", 404, "Not found", "There is no page at this address."),
        ("/host/ladders", 405, "Not a page to open", "This address takes a form's answer"),
        ("/ladders/main", 503, "The arena's services are unavailable", PLAIN["UNAVAILABLE"]),
    ],
)
def test_an_error_page_is_headed_in_words(url: str, path: str, status: int, title: str, message: str) -> None:
    """Error pages were headed by a gRPC code (UNAVAILABLE, NOT_FOUND) or a bare number (404, with
    "Not Found" under it; 405 and "Method Not Allowed" for a form's address opened in a new tab)."""
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}{path}", timeout=30)
    body = html.unescape(refused.value.read().decode())
    assert refused.value.code == status
    assert re.search(r"<h1>([^<]*)</h1>", body).group(1) == title, body  # type: ignore[union-attr]
    assert message in re.search(r'id="error-message">([^<]*)<', body).group(1)  # type: ignore[union-attr]


def test_the_live_view_is_served_when_the_matchmaker_cannot_say_whose_match_it_is(url: str) -> None:
    """The live page asks the matchmaker for the match's ladder and seats; without them it is the
    engine's events alone, as for a challenge."""
    with urllib.request.urlopen(f"{url}/live/main-1", timeout=30) as reply:
        page = reply.read().decode()
    assert reply.status == 200 and "/live/main-1/events" in page and "ladder-link" not in page


class Answering(Api):
    """A matchmaker that answers every match's look-up with one error."""

    def __init__(self, code: str) -> None:
        super().__init__("127.0.0.1:9")
        self.code = code

    async def match(self, match_id: str) -> Any:
        raise ApiError(self.code, "stand-in")


@pytest.mark.parametrize(
    ("code", "known"), [("NOT_FOUND", False), ("UNAVAILABLE", True), ("RESOURCE_EXHAUSTED", True), ("INTERNAL", True)]
)
def test_the_live_view_says_no_such_match_only_when_the_matchmaker_says_so(code: str, known: bool) -> None:
    """Any error of the matchmaker (busy, out of reach) made the match unknown to the live view: the
    engine's NOT_FOUND of a built-in bots' match then read 'no match with this id is being played'
    and the replay's address was hidden. Only the matchmaker's own NOT_FOUND says so."""
    with TestClient(create_app(Answering(code))) as client:
        shown = client.get("/live/main-1")
    config = re.search(r'<script id="live-config" type="application/json">(.*?)</script>', shown.text)
    assert shown.status_code == 200 and config, shown.text
    assert json.loads(config.group(1))["known"] is known


def test_a_host_form_with_a_csrf_token_that_is_not_ascii_is_refused(url: str) -> None:
    jar = http.cookiejar.CookieJar()
    host = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    signed_in = urllib.request.Request(f"{url}/host/login", urllib.parse.urlencode({"token": HOST_TOKEN}).encode())
    with pytest.raises(urllib.error.HTTPError):  # signed in; the dashboard it goes to cannot reach the matchmaker
        host.open(signed_in, timeout=30)
    assert [cookie.name for cookie in jar] == ["ohell_host"]
    form = urllib.request.Request(f"{url}/host/ladders", urllib.parse.urlencode({"csrf": "é", "name": "x"}).encode())
    with pytest.raises(urllib.error.HTTPError) as refused:
        host.open(form, timeout=30)
    assert refused.value.code == 403 and b"out of date" in refused.value.read()


def test_a_port_in_use_is_one_line() -> None:
    """The web app started on a port another process holds logged a task's SystemExit under two
    tracebacks (uvicorn's bind, then asyncio's "Task exception was never retrieved"): ``ohell up``
    showed the last 1,500 characters of them."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "services.web", "--address", f"127.0.0.1:{port}", "--matchmaker", "127.0.0.1:9"],
            capture_output=True,
            text=True,
            timeout=60,
            env=os.environ | {"OHELL_WEB_TOKEN": "w" * 32},
        )
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"the web app cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


@pytest.mark.parametrize("path", ["/host/login", "/tournaments", "/static/style.css", "/healthz", "/no/such/page"])
def test_every_answer_forbids_framing_and_sniffing(url: str, path: str) -> None:
    """A page, an error page (the matchmaker cannot be reached: 503), a file, the health check, a 404:
    none carried a header against framing (a host's form could be put under another site's page)
    nor against the browser sniffing a type of its own. Each also said what serves it
    (``server: uvicorn``): nothing a visitor needs, and a version hunt's first clue."""
    try:
        with urllib.request.urlopen(f"{url}{path}", timeout=30) as reply:
            headers = reply.headers
    except urllib.error.HTTPError as error:
        headers = error.headers
    assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "script-src 'self';" in headers["content-security-policy"]  # no inline or other sites' scripts
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "same-origin"
    assert "server" not in headers, headers["server"]
