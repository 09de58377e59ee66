"""The embedded redis-server: starts, keeps data across a restart (AOF), copes with busy ports."""

from __future__ import annotations

import socket

import pytest
import redis

import arena.embedded_redis as embedded
from arena.embedded_redis import EmbeddedRedis, PortTaken


def test_restart_keeps_what_was_written() -> None:
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        client.set("kept", "yes")
        server.restart()
        assert client.get("kept") == b"yes"


def test_a_port_taken_after_picking_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        picks = iter([taken])
        real_free_port = embedded.free_port
        monkeypatch.setattr(embedded, "free_port", lambda: next(picks, None) or real_free_port())
        with EmbeddedRedis() as server:
            assert server.port != taken
            assert redis.Redis.from_url(server.url).ping()


def test_a_given_port_served_by_another_redis_is_an_error() -> None:
    with EmbeddedRedis() as first:
        second = EmbeddedRedis(port=first.port)
        with pytest.raises(PortTaken, match=str(first.port)):
            second.start()
        second.cleanup()
        assert redis.Redis.from_url(first.url).ping()
