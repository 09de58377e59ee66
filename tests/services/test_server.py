"""The gRPC server every service runs (arena.rpc.server)."""

from __future__ import annotations

import asyncio
import collections
import socket
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.rpc.server import create_server, stop_server
from arena.rpc.settings import ConfigError
from arena.rpc.unix_socket import MAX_PATH_BYTES, clear_stale, leave_closed


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_a_burst_of_calls_on_one_connection_is_served_not_cancelled() -> None:
    # gRPC cancels calls past its default of 1,000 arrived but not yet taken up: a host's agents
    # reconnecting at once, or one caller's burst before the rate limit could answer it
    async def run() -> collections.Counter[str]:
        served = await create_server()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{served.port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)

                async def check() -> str:
                    try:
                        await stub.Check(health_pb2.HealthCheckRequest(), timeout=60)
                        return "OK"
                    except grpc.aio.AioRpcError as error:
                        return error.code().name

                return collections.Counter(await asyncio.gather(*(check() for _ in range(3000))))
        finally:
            await stop_server(served, 0)

    assert asyncio.run(run()) == {"OK": 3000}


def check(address: str) -> str:
    """The health of the server at ``address``, or the code of the call's error."""
    with grpc.insecure_channel(address) as channel:
        try:
            return health_pb2.HealthCheckResponse.ServingStatus.Name(
                health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status
            )
        except grpc.RpcError as error:
            return str(error.code().name)  # type: ignore[attr-defined]


def test_a_unix_socket_beside_the_port_outlives_the_server_closed(tmp_path: Path) -> None:
    """gRPC removes its socket file on a clean stop: a client that then found none would turn to the TCP
    address, which any user of the machine may take while the server is down. A closed one is left."""
    path = tmp_path / "a.sock"

    async def serve_once() -> tuple[str, str]:
        served = await create_server(unix_socket=str(path))
        try:
            return await asyncio.to_thread(check, f"unix:{path}"), await asyncio.to_thread(
                check, f"127.0.0.1:{served.port}"
            )
        finally:
            await stop_server(served, 0)

    assert asyncio.run(serve_once()) == ("SERVING", "SERVING")
    assert path.is_socket() and check(f"unix:{path}") == "UNAVAILABLE"
    assert asyncio.run(serve_once()) == ("SERVING", "SERVING")  # the closed one is replaced at the next start


def test_a_unix_socket_another_server_holds_is_not_taken(tmp_path: Path) -> None:
    """gRPC removes a socket file to bind its path, also one a live server listens on: its callers
    would have come to the second server."""
    path = tmp_path / "a.sock"
    with socket.socket(socket.AF_UNIX) as live:
        live.bind(str(path))
        live.listen()
        with pytest.raises(ConfigError, match=f"cannot listen on unix socket {path}: another process listens there"):
            asyncio.run(create_server(unix_socket=str(path)))
    other = tmp_path / "b.sock"
    other.write_text("not a socket")
    with pytest.raises(ConfigError, match="a file that is no socket is there"):
        asyncio.run(create_server(unix_socket=str(other)))
    assert other.read_text() == "not a socket"


def test_a_unix_socket_path_too_long_is_refused_in_a_line(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * (MAX_PATH_BYTES - len(str(tmp_path))))
    with pytest.raises(ConfigError, match=rf"the path is {len(str(deep)) + 7} bytes, over the {MAX_PATH_BYTES}"):
        asyncio.run(create_server(unix_socket=str(deep / "a.sock")))


def test_an_old_socket_this_user_may_not_remove_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user's closed socket in a sticky folder (/tmp): its unlink raised PermissionError, a
    traceback at start. (As root the unlink never fails, so the refusal is made here.)"""
    path = str(tmp_path / "old.sock")
    leave_closed(path)

    def refused(target: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("arena.rpc.unix_socket.os.unlink", refused)
    with pytest.raises(ConfigError, match="cannot remove the old one: Operation not permitted"):
        clear_stale(path)


def test_an_address_that_is_not_host_port_is_refused_by_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell engine --address nope`` said "address 'nope' must be ...", naming no flag, and so did
    ``ohell bot run BOT --serve nope`` (its flag is --serve); each is refused by its own flag now."""
    from arena.cli import main
    from services.engine.__main__ import main as engine_main
    from services.matchmaker.server import main as matchmaker_main

    said = "'nope' must be HOST:PORT with a port from 0 to 65535"
    for run, flag in (
        (lambda: engine_main(["--address", "nope"]), "--address"),
        (lambda: matchmaker_main(["--address", "nope"]), "--address"),
        (lambda: main(["bot", "run", "random", "--ladder", "l", "--serve", "nope", "--token", "t"]), "--serve"),
    ):
        with pytest.raises(SystemExit) as exited:
            run()
        assert exited.value.code == 2 and capsys.readouterr().err.endswith(f"error: argument {flag}: {said}\n")
    assert main(["bot", "connect", "--serve", "--address", "nope"]) == 2
    assert capsys.readouterr().err == "error: --address 'nope': with --serve, where to listen: HOST:PORT\n"
    with pytest.raises(ConfigError, match=rf"^address {said}$"):  # the library's own words: no flag of its own
        asyncio.run(create_server("nope"))
