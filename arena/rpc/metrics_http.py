"""Serve Prometheus metrics over HTTP at ``/metrics``: prometheus_client's WSGI app on a threading
server of our own, which bounds what a connection may hold.

prometheus_client's ``start_http_server`` gave every connection a thread for as long as the peer
kept it open, with no read deadline: a peer that connected and sent half a request line held a
thread of the service's process for ever, and a few thousand such connections (one per thread)
could use up the threads the process (the engine, the matchmaker, a worker) needs for its own
work. Here each read or write on a connection waits at most ``IO_DEADLINE_S``, and at most
``MAX_CONNECTIONS`` are served at once; another is closed as it arrives (a scraper retries at its
next interval). A peer sending a byte every few seconds can still hold the slots, which stops the
scrapes, never the service.
"""

from __future__ import annotations

import socket
import sys
import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import REGISTRY, CollectorRegistry, make_wsgi_app

IO_DEADLINE_S = 10.0
MAX_CONNECTIONS = 16  # Prometheus scrapes one at a time; a few people reading by hand beside it


class _Handler(WSGIRequestHandler):
    timeout = IO_DEADLINE_S  # StreamRequestHandler sets it on the connection: each read and write

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        """No line per request on the service's stderr."""


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # no thread for it
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # its thread could not start: the slot is not taken
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A peer too slow (past the deadline) or gone is no error of ours: socketserver printed a
        traceback for each on the service's stderr."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def start_metrics_server(
    port: int = 0, address: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY
) -> tuple[WSGIServer, threading.Thread, int]:
    """Start a daemon thread serving ``registry``; returns the server, its thread and the bound
    port (port 0 picks a free one). Stop with ``server.shutdown()``."""
    family = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    server_class = type("MetricsServer", (_Server,), {"address_family": family})
    server: WSGIServer = make_server(address, port, make_wsgi_app(registry), server_class, handler_class=_Handler)
    thread = threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True)
    thread.start()
    return server, thread, int(server.server_port)
