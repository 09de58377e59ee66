"""argparse types for the numbers a command puts in a request message: a value the message's field
cannot hold is the command's usage error naming the flag, not protobuf's "Value out of range"
traceback once the request is built. The service still checks its own, narrower ranges. Also what
the bot commands share: the agent token's options, and the addresses they dial when given none."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from arena.rpc.data_folder import nothing_listens, stack_address
from arena.rpc.settings import ConfigError, check_one_line, is_host_port, read_token_file
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
    if "," in token:  # no token has one: a row of the host's tokens file was refused as 'unknown token'
        source = (
            "--token" if args.token else f"--token-file {args.token_file}" if args.token_file else f"${AGENT_TOKEN_ENV}"
        )
        raise OhHellError(
            f"{source} holds a row of comma-separated fields, as the host's tokens file has them"
            " (name,agent_id,token): give the token alone, the row's last field"
        )
    return token


TOKENS_HEADER = "name,agent_id,token"  # the first line of the tokens file `ohell agent register|import --tokens` write


def _read(path: str) -> str:
    try:
        text = read_token_file(path, "--token-file", lines=True)
        if text.partition("\n")[0].strip() == TOKENS_HEADER:  # the whole file, as the host or `--tokens` wrote it
            raise ConfigError(
                f"--token-file {path} is a tokens file ({TOKENS_HEADER}, a row per agent): give a file"
                " holding your token alone, the last field of your agent's row"
            )
        check_one_line(text, "--token-file", path)
        if not text:
            raise ConfigError(f"--token-file {path} is empty")
        return text
    except ConfigError as error:
        raise OhHellError(str(error)) from None


# typed before an address by habit (gRPC's own target schemes are dns:, unix:, ipv4:...)
URL_SCHEMES = ("http", "https", "grpc", "grpcs", "tcp")


def address_or_stack(given: str | None, name: str, tcp: str, flag: str, folder: Path | None = None) -> str:
    """``given`` (HOST:PORT or unix:PATH) as it is, else ``ohell up``'s socket ``name`` in its data
    folder (``folder``, default $OHELL_DATA_DIR, else the default one) when that file is there, else
    ``tcp``. OhHellError for a socket another user may have put there, and for one nothing answers on:
    the stack is down, and whoever listens on its TCP port meanwhile (any user of the machine) is not
    sent the agent's token."""
    if given:
        scheme, sep, _ = given.partition("://")
        if (
            sep and scheme.lower() in URL_SCHEMES
        ):  # gRPC would take it for a host name and retry it for the connect timeout
            raise OhHellError(f"{flag} {given[:80]!r}: give HOST:PORT or unix:PATH, without {scheme}://")
        return given
    try:
        address = stack_address(name, tcp, who="the bot commands", sent="the agent token", flag=flag, folder=folder)
    except ConfigError as error:
        raise OhHellError(str(error)) from None
    if nothing_listens(address):
        raise OhHellError(
            f"the local stack is not running: nothing answers on {address} (start `ohell up`;"
            f" for a service elsewhere give {flag} ADDRESS)"
        )
    return address


class StackService(Protocol):
    """A service of ``ohell up`` that a bot command dials when given no address: ``ohell``'s own
    (arena.local.bot_cli's ``UpService``, which reads ohell.toml as ``ohell up`` does; this package
    may not) is given to the commands registered here (arena.sdk.cli)."""

    def address(self, given: str | None, flag: str) -> str:
        """``given`` (a flag's value) as ``address_or_stack`` takes it, else the service's address."""
        ...

    def help(self) -> str:
        """Where it is dialled when no address is given, for a flag's help."""
        ...


def host_port(text: str) -> str:
    """An address to listen on, HOST:PORT (argparse names the flag of one that is not)."""
    if not is_host_port(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r} must be HOST:PORT with a port from 0 to 65535")
    return text


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
