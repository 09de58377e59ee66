"""Request bodies an anonymous visitor sends the web app (its own process, port 0): one over the app's
limit is refused 413 before it is read, whether its length is declared or it comes in chunks (a
sign-in's limit is a few KiB: sign-ins are not counted by the visitors' rate limit), and a host
form posted without a session is refused before its body is parsed."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from services.web.visitors import MAX_BODY_BYTES

pytestmark = pytest.mark.slow  # a web app process


@pytest.fixture(scope="module")
def web(web_alone: tuple[str, int]) -> tuple[str, int]:
    return web_alone


def post(web: tuple[str, int], path: str, head: dict[str, str], body: Iterator[bytes]) -> tuple[int, bytes]:
    """POST ``body`` piece by piece (stopping early when the app has answered); (status, the
    response's start). Status 0: no answer, the app waiting for the rest of a body that never comes."""
    with socket.create_connection(web, timeout=10) as sock:
        lines = [f"POST {path} HTTP/1.1", "Host: test", *(f"{k}: {v}" for k, v in head.items()), "", ""]
        sock.sendall("\r\n".join(lines).encode())
        sock.setblocking(False)
        answer = b""
        for piece in body:
            try:
                answer += sock.recv(4096)
                break  # answered before the body was all sent
            except BlockingIOError:
                pass
            try:
                sock.sendall(piece)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
        sock.settimeout(10)
        try:
            while not complete(answer):
                more = sock.recv(4096)
                if not more:
                    break
                answer += more
        except TimeoutError:  # the app still waits for the rest of the body
            pass
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    return status, answer[:2000]


def complete(answer: bytes) -> bool:
    head, found, body = answer.partition(b"\r\n\r\n")
    length = [line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
    return bool(found) and len(body) >= (int(length[0].split(b":")[1]) if length else 0)


CSV_PART = b'--zz\r\ncontent-disposition: form-data; name="csv"; filename="names.csv"\r\n\r\n'


def pieces(total: int, chunked: bool = False, head: bytes = CSV_PART, size: int = 64 * 1024) -> Iterator[bytes]:
    """A body of about ``total`` bytes: ``head`` (by default a multipart file part: a CSV of agent
    names), then filler."""
    sent = 0
    while sent < total:
        piece = (head if not sent else b"") + b"x" * min(size, total - sent)
        sent += len(piece)
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece
    if chunked:
        yield b"0\r\n\r\n"


FORM = {"content-type": "application/x-www-form-urlencoded"}
SIGN_IN_BYTES = 4096  # services.web.visitors.MAX_SIGN_IN_BYTES (docs/operations.md)
UPLOAD = {"content-type": "multipart/form-data; boundary=zz"}


def test_a_declared_body_over_the_limit_is_refused_before_it_is_read(web: tuple[str, int]) -> None:
    huge = 1 << 30  # declared, never sent: the app must not wait for it
    for path, kind in (("/host/login", FORM), ("/host/agents", UPLOAD), ("/host/tournaments/new", UPLOAD)):
        status, answer = post(web, path, kind | {"content-length": str(huge)}, pieces(MAX_BODY_BYTES + 1))
        assert status == 413, (path, answer)  # answered while the declared body was far from sent


def test_a_chunked_body_over_the_limit_is_refused(web: tuple[str, int]) -> None:
    head = FORM | {"transfer-encoding": "chunked"}
    body = pieces(64 * MAX_BODY_BYTES, chunked=True, head=b"token=")
    status, answer = post(web, "/host/login", head, body)
    assert status == 413, answer


def test_a_host_form_without_a_session_is_refused_unread(web: tuple[str, int]) -> None:
    # under the limit, but a form nobody signed in to post: 403 whatever the body holds
    head = UPLOAD | {"content-length": str(MAX_BODY_BYTES)}
    status, answer = post(web, "/host/agents", head, pieces(MAX_BODY_BYTES // 2))
    assert status == 403, answer  # answered with half the declared body never sent


def test_ordinary_posts_still_work(web: tuple[str, int]) -> None:
    body = b"token=wrong"
    status, answer = post(web, "/host/login", FORM | {"content-length": str(len(body))}, iter([body]))
    assert status == 403 and b"wrong host token" in answer, answer


@pytest.mark.parametrize("chunked", [False, True])
def test_a_sign_in_holds_a_token_and_little_more(web: tuple[str, int], chunked: bool) -> None:
    """Sign-ins are not counted by the visitors' limit (a stranger's would have held the host's back):
    one of 512 KiB at full speed made the app read and parse each."""
    body = b"token=" + b"x" * SIGN_IN_BYTES
    head = FORM | ({"transfer-encoding": "chunked"} if chunked else {"content-length": str(len(body))})
    status, answer = post(web, "/host/login", head, pieces(len(body), chunked, head=b"token=", size=1024))
    assert status == 413, answer
