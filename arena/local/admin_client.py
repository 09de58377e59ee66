"""The host commands' connection: the matchmaker's stub with the host credential on every call.

The matchmaker's address: ``--matchmaker``, else $OHELL_MATCHMAKER_ADDRESS, else ``ohell up``'s unix
socket in its data folder when that file is there, else ``ohell up``'s TCP address. Its data folder,
address and host token file are found as ``ohell up`` run beside the command took them: the
environment, else ``ohell.toml`` ($OHELL_CONFIG, else the working folder's), else the defaults. A socket
file with nothing answering is a stack that is down: the commands say so and do not try TCP, where
another user of the machine may listen while the stack is down and take the host token. Nor do they
dial a socket, or read a host-token, in a data folder another user owns or may write in.
The host token: ``--host-token-file``, else $OHELL_HOST_TOKEN, else ``ohell up``'s host token file
($OHELL_HOST_TOKEN_FILE, else host_token_file in ``ohell.toml``), else the file ``ohell up`` keeps in its
data folder. Admin RPCs that the matchmaker does not have yet fail with UNIMPLEMENTED, named.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.local.config import HOST_TOKEN_ENV, stack_folder, stack_setting
from arena.rpc.data_folder import MATCHMAKER_SOCKET, data_folder_file, not_ours, stack_address
from arena.rpc.settings import ConfigError, read_token_file
from ohell.errors import OhHellError

if TYPE_CHECKING:  # gRPC and the messages are loaded when a command connects: `ohell rules` needs neither
    import grpc

TIMEOUT_S = 30.0
# an export streams for as long as its size takes (a 6,800-table tournament's JSON is ~40 MB); the
# matchmaker gives each piece its own deadline, so a stalled stream still ends
EXPORT_DEADLINE_S = 600.0
REACH_S = 1.0  # how long to try connecting again, to tell an unreachable matchmaker from one that refused


def host_token(args: argparse.Namespace) -> tuple[str, str]:
    """(the host token, where it comes from); ("", where it was looked for) when there is none."""
    if args.host_token_file:
        path = Path(args.host_token_file)
    elif os.environ.get(HOST_TOKEN_ENV):
        return os.environ[HOST_TOKEN_ENV].strip(), f"${HOST_TOKEN_ENV}"
    elif up_file := stack_setting("host_token_file", os.environ):  # ohell up's ($OHELL_HOST_TOKEN_FILE, ohell.toml)
        try:
            return read_token_file(Path(up_file), "host token file"), up_file
        except ConfigError as error:  # not this user's to read: public reads go on, as for the data folder's
            return "", f"no --host-token-file, no ${HOST_TOKEN_ENV}; {error}"
    else:
        path = data_folder_file("host-token", stack_folder(os.environ)[0])
        if path.exists() and (why := not_ours(path.parent)):  # a file anyone may have put there, or linked to theirs
            return "", f"no --host-token-file, no ${HOST_TOKEN_ENV}; {path} not read: {why}"
        if not path.exists():  # calls go without a token; admin RPCs then answer UNAUTHENTICATED
            return "", f"no --host-token-file, no ${HOST_TOKEN_ENV}, no {path}"
        try:
            return read_token_file(path, "host token file"), str(path)
        except ConfigError as error:  # another user's stack (the file is its user's alone): public reads go on
            return "", f"no --host-token-file, no ${HOST_TOKEN_ENV}; {error}"
    try:
        return read_token_file(path), str(path)
    except ConfigError as error:
        raise OhHellError(str(error)) from None


def deadline(method: str) -> float:
    """TIMEOUT_S, but what the largest tournament takes to create for CreateTournament, and
    EXPORT_DEADLINE_S for a tournament's export."""
    from arena.tournament.model import CREATE_DEADLINE_S

    if method == "ExportTournament":
        return EXPORT_DEADLINE_S
    return CREATE_DEADLINE_S if method == "CreateTournament" else TIMEOUT_S


def request_type_of(method: str) -> Any:
    """The request message of a matchmaker RPC (the tournament ones are in tournament.proto), or None."""
    from arena.proto.ohell.v1 import matchmaker_pb2 as pb
    from arena.proto.ohell.v1 import tournament_pb2 as tpb

    return getattr(pb, f"{method}Request", None) or getattr(tpb, f"{method}Request", None)


class Unreachable(OhHellError):
    """Nothing answers at the matchmaker's address: a command with another way to its data says so."""


class CallError(OhHellError):
    """A call the matchmaker refused; ``code``: its status's name (NOT_FOUND, ...)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class Host:
    """The matchmaker's stub with the host token on every call, and errors as ``OhHellError``."""

    def __init__(self, channel: grpc.Channel, address: str, token: str, token_source: str = "") -> None:
        from arena.proto.ohell.v1 import matchmaker_pb2_grpc
        from arena.rpc.auth import auth_metadata

        self.channel = channel
        self.stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        self.address = address
        self.metadata = auth_metadata(token) if token else None
        self.token_source = token_source

    def call(self, method: str, **fields: Any) -> Any:
        import grpc

        request_type = request_type_of(method)
        rpc = getattr(self.stub, method, None)
        if request_type is None or rpc is None:
            raise OhHellError(f"{method}: UNIMPLEMENTED: the matchmaker's API has no {method} yet")
        try:
            return rpc(request_type(**fields), timeout=deadline(method), metadata=self.metadata)
        except grpc.RpcError as error:
            raise self.error(method, error) from None

    def stream(self, method: str, **fields: Any) -> Iterator[Any]:
        """Every answer of a server-streaming RPC."""
        import grpc

        try:
            yield from self.call(method, **fields)
        except grpc.RpcError as error:
            raise self.error(method, error) from None

    def error(self, method: str, error: grpc.RpcError) -> OhHellError:
        import grpc

        code, details = error.code(), error.details() or ""  # type: ignore[attr-defined]
        if code == grpc.StatusCode.UNAVAILABLE and not self.reachable():
            if self.address.startswith("unix:"):  # ohell up's socket file: its stack is down (TCP is not tried)
                return Unreachable(
                    f"the local stack is not running: nothing answers on {self.address} (start `ohell up`;"
                    " for a matchmaker elsewhere give --matchmaker ADDRESS)"
                )
            return Unreachable(
                f"cannot reach the matchmaker at {self.address}: is `ohell up` running? (--matchmaker ADDRESS)"
            )
        if code == grpc.StatusCode.UNAVAILABLE:  # it answered: something behind it is away (its Redis, the archive)
            return OhHellError(f"{method}: UNAVAILABLE: the matchmaker at {self.address} is up but says: {details}")
        if code == grpc.StatusCode.UNAUTHENTICATED:  # which token went, and from where: the host's first question
            sent = (
                f"the host token from {self.token_source}" if self.metadata else f"no host token ({self.token_source})"
            )
            return OhHellError(
                f"{method}: UNAUTHENTICATED: {details}: the matchmaker at {self.address} was sent {sent}; "
                "give the running stack's (`ohell up` prints where it is) with --host-token-file PATH"
                f" or ${HOST_TOKEN_ENV}"
            )
        return CallError(f"{method}: {code.name}: {details}", code.name)

    def reachable(self) -> bool:
        """Whether the channel connects to the matchmaker now (an UNAVAILABLE that the matchmaker
        itself answered leaves it connected)."""
        import grpc

        try:
            grpc.channel_ready_future(self.channel).result(timeout=REACH_S)
        except grpc.FutureTimeoutError:
            return False
        return True

    def pages(self, method: str, field: str, **fields: Any) -> Iterator[Any]:
        """Every item of a paged list RPC (one call when the request has no paging)."""
        request_type = request_type_of(method)
        paged = request_type is not None and "page_token" in request_type.DESCRIPTOR.fields_by_name
        token = ""
        while True:
            reply = self.call(method, **fields, **({"page_token": token, "page_size": 500} if paged else {}))
            yield from getattr(reply, field)
            token = reply.next_page_token if paged else ""
            if not token:
                return


def default_address() -> str:
    """``ohell up``'s unix socket when its file is in its data folder (also a closed one: the stack is
    down), else its TCP address (``matchmaker_address`` in ohell.toml, else the default). OhHellError
    for a socket another user may have put there: what listens on it would be sent the host token."""
    try:
        return stack_address(
            MATCHMAKER_SOCKET,
            stack_setting("matchmaker_address", os.environ),
            who="the host commands",
            sent="the host token",
            flag="--matchmaker",
            folder=stack_folder(os.environ)[0],
        )
    except ConfigError as error:
        raise OhHellError(str(error)) from None


@contextmanager
def connect(args: argparse.Namespace) -> Iterator[Host]:
    import grpc

    address = args.matchmaker or os.environ.get("OHELL_MATCHMAKER_ADDRESS") or default_address()
    token = host_token(args)  # a bad token file is said before gRPC starts
    with grpc.insecure_channel(address) as channel:
        yield Host(channel, address, *token)


def with_host(command: Callable[[Host, argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        with connect(args) as host:
            try:
                return command(host, args)
            except OSError as error:  # a file the command reads or writes (--out, --tokens, the CSV)
                raise OhHellError(f"{error.filename or 'file'}: {error.strerror or error}") from None

    return handler


def add_common(parser: argparse.ArgumentParser, public: bool = False) -> argparse.ArgumentParser:
    """``public``: a read anyone may make (a bot author too), told so in its help."""
    parser.add_argument(
        "--matchmaker",
        help="HOST:PORT or unix:PATH (default: $OHELL_MATCHMAKER_ADDRESS, else ohell up's socket in its data folder, "
        "else ohell up's address: matchmaker_address in ohell.toml, else 127.0.0.1:50052)",
    )
    credential = "not needed: anyone may read this" if public else "the host credential"
    parser.add_argument("--host-token-file", help=f"{credential} (default: ${HOST_TOKEN_ENV}, else ohell up's)")
    return parser
