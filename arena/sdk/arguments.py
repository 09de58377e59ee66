"""argparse types for the numbers a command puts in a request message: a value the message's field
cannot hold is the command's usage error naming the flag, not protobuf's "Value out of range"
traceback once the request is built. The service still checks its own, narrower ranges."""

from __future__ import annotations

import argparse
from collections.abc import Callable

UINT32 = 2**32 - 1
UINT64 = 2**64 - 1


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
