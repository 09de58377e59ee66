"""argparse types for the numbers a command puts in a request message: a value the message's field
cannot hold is the command's usage error naming the flag, not protobuf's "Value out of range"
traceback once the request is built. The service still checks its own, narrower ranges."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from arena.rpc.settings import ConfigError, read_token_file
from ohell.errors import OhHellError

UINT32 = 2**32 - 1
UINT64 = 2**64 - 1
AGENT_TOKEN_ENV = "OHELL_AGENT_TOKEN"


def add_token_options(parser: argparse.ArgumentParser, what: str = "your agent token", otherwise: str = "") -> None:
    """``--token`` or ``--token-file``, one or the other (else $OHELL_AGENT_TOKEN, else ``otherwise``):
    a token on the command line is in the process list, which every user of the machine may read (``ps``)."""
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--token", help=f"{what}: ps shows it to every user here, so prefer --token-file or ${AGENT_TOKEN_ENV}"
    )
    given.add_argument(
        "--token-file", metavar="PATH", help=f"read {what} from this file (default: ${AGENT_TOKEN_ENV}{otherwise})"
    )


def agent_token(args: argparse.Namespace, required: bool = True) -> str:
    """``--token``, else the text of ``--token-file``, else $OHELL_AGENT_TOKEN."""
    token = args.token or (_read(args.token_file) if args.token_file else os.environ.get(AGENT_TOKEN_ENV, ""))
    if required and not token:
        raise OhHellError(f"give --token-file, set {AGENT_TOKEN_ENV} or give --token (the token the host gave you)")
    return token


def _read(path: str) -> str:
    try:
        token = read_token_file(path, "--token-file")
    except ConfigError as error:
        raise OhHellError(str(error)) from None
    if not token:
        raise OhHellError(f"--token-file {path} is empty")
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
