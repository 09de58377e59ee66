"""argparse types for the numbers a command puts in a request message: a value the message's field
cannot hold is the command's usage error naming the flag, not protobuf's "Value out of range"
traceback once the request is built. The service still checks its own, narrower ranges."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from ohell.errors import OhHellError

UINT32 = 2**32 - 1
UINT64 = 2**64 - 1
AGENT_TOKEN_ENV = "OHELL_AGENT_TOKEN"


def agent_token(given: str | None, required: bool = True) -> str:
    """``--token``, else $OHELL_AGENT_TOKEN (off the command line, where ``ps`` shows it)."""
    token = given or os.environ.get(AGENT_TOKEN_ENV, "")
    if required and not token:
        raise OhHellError(f"give --token or set {AGENT_TOKEN_ENV} (the token the host gave you)")
    return token


def whole(largest: int, smallest: int = 0) -> Callable[[str], int]:
    """A whole number from ``smallest`` to ``largest``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        if not smallest <= value <= largest:
            raise argparse.ArgumentTypeError(f"{value} is not a whole number from {smallest} to {largest}")
        return value

    return parse
