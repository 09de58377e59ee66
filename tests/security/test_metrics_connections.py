"""Slowloris against a service's /metrics port (the metrics server on port 0, as each service starts
it): prometheus_client's own server gave each connection a thread of the service's process for as
long as the peer kept it open, so stalled connections could use up the process's threads. Now a
few are served at once, each read waits a bounded time, and the rest are closed as they arrive."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest

from arena.rpc.metrics_http import IO_DEADLINE_S, MAX_CONNECTIONS, start_metrics_server

pytestmark = pytest.mark.slow  # waits out IO_DEADLINE_S

GRACE_S = 30.0  # beyond the deadline, for a loaded machine


def closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_stalled_connections_take_a_few_threads_for_a_bounded_time() -> None:
    server, _, port = start_metrics_server(0)
    try:
        threads_before = threading.active_count()
        stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(MAX_CONNECTIONS)]
        for sock in stalled:
            sock.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
        with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
            assert closed_within(extra, 10), "a connection past the bound was given a thread"
        assert threading.active_count() <= threads_before + MAX_CONNECTIONS
        started = time.monotonic()
        for sock in stalled:
            assert closed_within(sock, IO_DEADLINE_S + GRACE_S), "a stalled connection was held past the deadline"
            sock.close()
        assert time.monotonic() - started < IO_DEADLINE_S + GRACE_S
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            assert response.status == 200 and b"# TYPE" in response.read()
    finally:
        server.shutdown()
        server.server_close()
