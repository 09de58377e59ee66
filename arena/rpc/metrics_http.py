"""Serve Prometheus metrics over HTTP at ``/metrics`` (prometheus_client's own server)."""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, CollectorRegistry, start_http_server


def start_metrics_server(
    port: int = 0, address: str = "127.0.0.1", registry: CollectorRegistry = REGISTRY
) -> tuple[WSGIServer, threading.Thread, int]:
    """Start a daemon thread serving ``registry``; returns the server, its thread and the bound
    port (port 0 picks a free one). Stop with ``server.shutdown()``."""
    server, thread = start_http_server(port, addr=address, registry=registry)
    return server, thread, int(server.server_port)
