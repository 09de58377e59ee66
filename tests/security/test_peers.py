"""A caller without a token is its peer's address, for every per-caller bound (rate limits,
self-registration, spectate streams, challenges, exports) and for the web app's per-visitor limits.
An IPv6 peer's address was taken whole: whoever holds a /64 (what an ISP gives one subscriber, or a
cloud machine) has 2**64 addresses to call from, each a new caller with a fresh budget. An IPv6
peer now counts as its /64; an IPv4 peer reaching a dual-stack server as ::ffff:a.b.c.d counts as
its IPv4 address (as a /64 of its own, every IPv4 client would have been one caller)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from arena.rpc.ratelimit import RateLimit, peer_of
from services.web.visitors import VisitorLimit

from ..web.test_visitors import Inner, visit


def peer(address: str) -> str:
    return peer_of(SimpleNamespace(peer=lambda: address))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("ipv6:[2001:db8:1:2::1]:5000", "ipv6:[2001:db8:1:2:ffff:ffff:ffff:fffe]:6000"),
        ("ipv6:[2001:db8:1:2::1]:5000", "ipv6:[2001:db8:1:2:0:0:0:1]:5001"),
        ("ipv4:192.0.2.7:5000", "ipv6:[::ffff:192.0.2.7]:6000"),
        ("ipv4:192.0.2.7:5000", "ipv4:192.0.2.7:6000"),
    ],
)
def test_one_network_is_one_caller(one: str, other: str) -> None:
    assert peer(one) == peer(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("ipv6:[2001:db8:1:2::1]:5000", "ipv6:[2001:db8:1:3::1]:5000"),
        ("ipv6:[::ffff:192.0.2.7]:5000", "ipv6:[::ffff:192.0.2.8]:5000"),
        ("ipv4:192.0.2.7:5000", "ipv4:192.0.2.8:5000"),
    ],
)
def test_other_networks_are_other_callers(one: str, other: str) -> None:
    assert peer(one) != peer(other)


def test_peers_that_are_not_addresses_are_kept() -> None:
    assert peer("unix:/tmp/socket") == "p:unix:/tmp/socket"
    assert peer("unix:") == "p:unix:"  # what gRPC names a client of a unix socket (ohell up's matchmaker.sock)
    assert peer("") == "p:unknown"
    assert peer("ipv6:[not an address]:5000") == "p:ipv6:[not an address]"


def test_a_visitor_is_its_network() -> None:
    async def run() -> None:
        app = VisitorLimit(Inner(), RateLimit(rate=0.5, burst=2))
        for client in ("2001:db8:1:2::1", "2001:db8:1:2::2"):
            assert (await visit(app, "/ladders/main", client=client))[0] == 200
        assert (await visit(app, "/ladders/main", client="2001:db8:1:2::3"))[0] == 429
        assert (await visit(app, "/ladders/main", client="2001:db8:1:3::1"))[0] == 200
        assert (await visit(app, "/ladders/main", client="::ffff:192.0.2.7"))[0] == 200
        assert (await visit(app, "/ladders/main", client="::ffff:192.0.2.8"))[0] == 200  # not one /64 of IPv4

    asyncio.run(run())
