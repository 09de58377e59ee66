"""Whose request it is: the web app's own process (port 0, no services behind it) believes
X-Forwarded-For and X-Forwarded-Proto only from the proxies it is told of (``--trusted-proxies``,
``OHELL_WEB_TRUSTED_PROXIES``). uvicorn believed any peer on 127.0.0.1 by default: a local user, or
anything relaying for others on the machine, could be a new visitor on every request (no rate
limit) or make the host cookie's Secure flag follow a header of its choice."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from .conftest import HOST_TOKEN, start_web

NOWHERE = SimpleNamespace(matchmaker_address="127.0.0.1:9", engine_address="127.0.0.1:9")
PROXY_VARIABLES = ("OHELL_WEB_TRUSTED_PROXIES", "FORWARDED_ALLOW_IPS")


def web_app(log: Path, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """The web app allowing each visitor 2 requests (and 1 more every 100 s), with ``env``."""
    base = {name: value for name, value in os.environ.items() if name not in PROXY_VARIABLES}
    settings = base | {"OHELL_HOST_TOKEN": HOST_TOKEN, "OHELL_WEB_RATE_LIMIT": "0.01:2"} | env
    return start_web(NOWHERE, log, settings)  # type: ignore[arg-type]


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    process, address = web_app(tmp_path / "web.log")
    yield address
    process.terminate()
    process.wait(10)


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[str]:
    process, address = web_app(tmp_path / "web.log", OHELL_WEB_TRUSTED_PROXIES="127.0.0.1, ::1")
    yield address
    process.terminate()
    process.wait(10)


def visit(url: str, headers: dict[str, str]) -> tuple[int, str]:
    # a page no one has (404): counted by the visitors' limit, and needs no services
    request = urllib.request.Request(f"{url}/no-such-page", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status), ""
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def login_cookie(url: str, headers: dict[str, str]) -> str:
    """The Set-Cookie of a host's sign-in (its redirect is not followed)."""

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    form = urllib.parse.urlencode({"token": HOST_TOKEN}).encode()
    request = urllib.request.Request(f"{url}/host/login", form, headers=headers)
    with pytest.raises(urllib.error.HTTPError) as redirected:
        urllib.request.build_opener(Stay).open(request, timeout=30)
    assert redirected.value.code == 303
    return str(redirected.value.headers["set-cookie"])


def test_a_local_peer_cannot_be_a_new_visitor_by_saying_so(url: str) -> None:
    statuses = [visit(url, {"x-forwarded-for": f"203.0.113.{n}"}) for n in range(1, 4)]
    assert [status for status, _ in statuses] == [404, 404, 429], statuses
    assert "too many requests from 127.0.0.1" in statuses[2][1]


def test_a_local_peer_cannot_make_the_app_believe_it_is_reached_over_https(url: str) -> None:
    cookie = login_cookie(url, {"x-forwarded-proto": "https"})
    assert "secure" not in cookie.lower() and "httponly" in cookie.lower(), cookie


def test_behind_a_proxy_it_is_told_of_each_visitor_has_its_own_limit(proxied: str) -> None:
    first = [visit(proxied, {"x-forwarded-for": "203.0.113.1"})[0] for _ in range(3)]
    others = [visit(proxied, {"x-forwarded-for": f"203.0.113.{n}"})[0] for n in range(2, 5)]
    assert first == [404, 404, 429] and others == [404, 404, 404]
    assert "secure" in login_cookie(proxied, {"x-forwarded-proto": "https"}).lower()


def test_behind_a_proxy_an_address_the_visitor_put_first_is_not_believed(proxied: str) -> None:
    """The proxy appends the address it saw to the visitor's own X-Forwarded-For: the visitor is the
    last address that is not a proxy's, whatever it wrote before it."""
    written = [visit(proxied, {"x-forwarded-for": f"198.51.100.{n}, 203.0.113.7"}) for n in range(3)]
    assert [status for status, _ in written] == [404, 404, 429] and "from 203.0.113.7" in written[2][1]


def test_a_proxy_network_written_with_its_host_bits_is_believed(tmp_path: Path) -> None:
    """127.0.0.1/8 passed the check (a network, host bits allowed) but uvicorn, which reads networks
    strictly, took it for a name no peer has: the proxy was believed in nothing, every visitor had its
    address (a stranger's requests held the host's back) and the cookie lost its Secure flag."""
    process, address = web_app(tmp_path / "web.log", OHELL_WEB_TRUSTED_PROXIES="127.0.0.1/8, ::1/64")
    try:
        statuses = [visit(address, {"x-forwarded-for": f"203.0.113.{n}"})[0] for n in range(1, 4)]
        assert statuses == [404, 404, 404]
        assert "secure" in login_cookie(address, {"x-forwarded-proto": "https"}).lower()
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("value", ["localhost", "127.0.0.1,proxy.internal", "10.0.0.0/33", "*", "10.0.0.1,*"])
@pytest.mark.parametrize("source", ["--trusted-proxies", *PROXY_VARIABLES])
def test_a_proxy_that_is_not_an_address_is_named_at_start(value: str, source: str) -> None:
    """uvicorn takes an entry it cannot parse for a literal name no peer ever has: the proxy's
    visitors would all share its limit, and nothing would say why. With '*' it takes the first
    address of X-Forwarded-For, which the visitor may have written itself (a proxy appends). The
    refusal names where the value came from: one set in uvicorn's FORWARDED_ALLOW_IPS (as the k8s
    manifest advised, '*' included) was refused as a --trusted-proxies no one gave."""
    command = [sys.executable, "-m", "services.web", "--address", "127.0.0.1:0", "--matchmaker", "127.0.0.1:9"]
    env = {name: text for name, text in os.environ.items() if name not in PROXY_VARIABLES}
    if source.startswith("--"):
        command += [source, value]
    else:
        env[source] = value
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env | {"OHELL_WEB_TOKEN": "w" * 32})
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    where = source if source.startswith("--") else f"${source}"
    assert line.startswith(f"{where}: ") and ("is not an IP address" in line or "'*' would" in line), line
