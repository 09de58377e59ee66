"""An endpoint seat's address is ASCII host:port with a port from 1 to 65535 wherever a caller gives
one (``arena.play.specs.check_endpoint``): the host's challenge took any text (a line break, no port
at all, "host:7OOO") and played the match with a seat that could never answer, every decision a
fault, instead of saying which seat was wrong. Real engine and matchmaker processes, with the host
token (the only caller who may name an endpoint)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.play.players import EndpointPlayer
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, match_pb2, matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, Service

pytestmark = pytest.mark.slow  # service processes

HOST = auth_metadata(HOST_TOKEN)
SHORT = rules_pb2.Rules(preset="classic", hand_sizes=[1])
BAD = ["10.0.0.1:7000\n", "ééé", "bot.example", "bot.example:7OOO", "bot.example:0", "bot.example:65536", "a b:80"]
# gRPC target schemes: the platform dialled a local unix socket ("sock:80", the abstract "bot:80")
BAD += ["unix:sock:80", "unix-abstract:bot:80", "::1:7000"]


def details(call: Callable[..., object], request: object) -> tuple[grpc.StatusCode, str]:
    try:
        call(request, metadata=HOST, timeout=60)
    except grpc.RpcError as error:
        return error.code(), str(error.details())
    return grpc.StatusCode.OK, ""


def test_a_challenge_seat_that_is_not_host_port_is_refused_naming_it(start_service: Callable[..., Service]) -> None:
    with start_service("services.engine").channel() as channel:
        stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
        wrong = []
        for address in BAD:
            seats = [challenge_pb2.ChallengeSeat(endpoint=address)] + [
                challenge_pb2.ChallengeSeat(builtin="random") for _ in range(2)
            ]
            code, text = details(stub.Challenge, challenge_pb2.ChallengeRequest(rules=SHORT, seats=seats))
            if code != grpc.StatusCode.INVALID_ARGUMENT or "seats[0].endpoint" not in text:
                wrong.append(f"{address!r}: {code.name} {text[:120]}")
        assert not wrong, "\n".join(wrong)


def test_an_agent_endpoint_is_ascii_host_port(start_service: Callable[..., Service]) -> None:
    """RegisterAgent's own check took any letter (Python's \\w) in the host: 'ééé:80' was registered
    and dialled on every match of its ladder, where it could never be reached."""
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        wrong = []
        for number, address in enumerate([*BAD, "ééé:80", "bot٣.example:80"]):
            request = pb.RegisterAgentRequest(name=f"e{number}", kind=pb.AGENT_KIND_ENDPOINT, endpoint=address)
            code, text = details(stub.RegisterAgent, request)
            if code != grpc.StatusCode.INVALID_ARGUMENT or "endpoint" not in text:
                wrong.append(f"{address!r}: {code.name} {text[:120]}")
        assert not wrong, "\n".join(wrong)
        for number, address in enumerate(("bot.example:7000", "10.0.0.1:1", "[::1]:65535")):  # still registered
            request = pb.RegisterAgentRequest(name=f"ok{number}", kind=pb.AGENT_KIND_ENDPOINT, endpoint=address)
            assert stub.RegisterAgent(request, metadata=HOST).agent.endpoint == address


def test_an_endpoint_is_dialled_by_dns_never_as_a_grpc_scheme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'unix:80' is host:port (a host named 'unix'), yet gRPC reads it as its unix scheme: the
    platform dialled the local socket '80' in its working folder, as it would any address an older
    rule let in and a store still holds."""
    monkeypatch.chdir(tmp_path)
    with socket.socket(socket.AF_UNIX) as local:
        local.bind("80")
        local.listen()
        local.settimeout(2.0)

        async def dial() -> None:
            player = EndpointPlayer("unix:80")
            try:
                await player.open(match_pb2.MatchStarted(match_id="m"))
            finally:
                await player.close()

        asyncio.run(dial())
        with pytest.raises(TimeoutError):  # a connection made would be waiting here
            local.accept()[0].close()
