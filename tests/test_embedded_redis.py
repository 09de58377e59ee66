"""The embedded redis-server: starts, keeps data across a restart (AOF), copes with busy ports."""

from __future__ import annotations

import socket

import pytest
import redis

import arena.embedded_redis as embedded
from arena.embedded_redis import EmbeddedRedis, PortTaken
from arena.redis_client import retrying_client


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


@pytest.mark.parametrize("given", ["", ":wrong@"], ids=["no password", "a wrong one"])
def test_the_retrying_client_does_not_retry_a_refused_password(given: str) -> None:
    """redis-py counts a refused password as a connection error: the platform's retrying client tried
    it again at every level (``ohell ladder rebuild`` took 90 s to say the URL lacked the password)."""
    with EmbeddedRedis(appendonly=False, password="the-password-0123") as server:
        admin = redis.Redis(port=server.port, password="the-password-0123")
        before = int(admin.info("stats")["total_connections_received"])
        client = retrying_client(f"redis://{given}127.0.0.1:{server.port}/0")
        with pytest.raises(redis.AuthenticationError):
            client.ping()
        tries = int(admin.info("stats")["total_connections_received"]) - before
        assert tries == 1, tries
