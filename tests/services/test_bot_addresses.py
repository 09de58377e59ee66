"""The bot commands' addresses: a URL typed where HOST:PORT belongs is refused at once."""

from __future__ import annotations

import pytest

from arena.sdk.arguments import address_or_stack
from ohell.errors import OhHellError


@pytest.mark.parametrize("given", ["http://127.0.0.1:50051", "HTTPS://arena.example:443", "grpc://h:1"])
def test_a_url_is_refused_naming_the_flag(given: str) -> None:
    with pytest.raises(OhHellError, match=r"--engine .*give HOST:PORT or unix:PATH, without \w+://"):
        address_or_stack(given, "engine.sock", "127.0.0.1:50051", "--engine")


@pytest.mark.parametrize("given", ["127.0.0.1:50051", "unix:/tmp/x.sock", "dns:///arena.example:50051", "[::1]:7"])
def test_host_port_and_grpc_targets_pass_as_given(given: str) -> None:
    assert address_or_stack(given, "engine.sock", "127.0.0.1:50051", "--engine") == given
