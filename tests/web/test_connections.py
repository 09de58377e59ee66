"""Slowloris against the web app (its own process, port 0): connections that never finish a
request's head are closed after services.web.connections.HEAD_DEADLINE_S (uvicorn held them for
ever: its keep-alive timer stops at the first byte), and one address holding
MAX_CONNECTIONS_PER_ADDRESS connections is refused more while another address is still served."""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack

import pytest

from services.web.connections import HEAD_DEADLINE_S, MAX_CONNECTIONS_PER_ADDRESS

pytestmark = pytest.mark.slow  # a web app process, and waits of HEAD_DEADLINE_S

GRACE_S = 30.0  # beyond the deadline, for a loaded machine


@pytest.fixture(scope="module")
def web(web_alone: tuple[str, int]) -> tuple[str, int]:
    return web_alone


def connect(web: tuple[str, int], source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(web, timeout=10, source_address=(source, 0))


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long until the app closed ``sock`` (reading what it sent until then), None if still open."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def healthz(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
    sock.settimeout(10)
    return sock.recv(4096)


def test_a_request_head_that_never_ends_is_closed(web: tuple[str, int]) -> None:
    with connect(web) as silent, connect(web) as partial, connect(web) as kept:
        partial.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n")  # and never the blank line
        assert healthz(kept).startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request on a kept-alive connection, stalled
        for name, sock in (("silent", silent), ("partial", partial), ("kept", kept)):
            waited = closed_within(sock, HEAD_DEADLINE_S + GRACE_S)
            assert waited is not None, f"the {name} connection is still open {HEAD_DEADLINE_S + GRACE_S} s on"


def test_one_address_cannot_hold_every_connection(web: tuple[str, int]) -> None:
    with ExitStack() as held:
        for _ in range(MAX_CONNECTIONS_PER_ADDRESS):
            sock = held.enter_context(connect(web))
            # a sign-in whose body never comes: its head is in, so no deadline ends it (the bound does)
            sock.sendall(b"POST /host/login HTTP/1.1\r\nHost: test\r\ncontent-length: 100\r\n\r\n")
        with connect(web) as extra:  # refused as it opens: read without sending (a reset could lose the answer)
            extra.settimeout(10)
            assert extra.recv(4096).startswith(b"HTTP/1.1 429"), "a connection over the bound was served"
        with connect(web, source="127.0.0.2") as other:
            assert healthz(other).startswith(b"HTTP/1.1 200"), "another address was refused"
    deadline = time.monotonic() + GRACE_S  # the held ones closed: the address is served again
    while True:
        with connect(web) as again:
            answer = healthz(again)
        if answer.startswith(b"HTTP/1.1 200") or time.monotonic() > deadline:
            break
    assert answer.startswith(b"HTTP/1.1 200"), answer
