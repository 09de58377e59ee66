"""The Node.js example bot (examples/node/bot.js) pointed at a hostile gateway and matchmaker: the
server's text (a notice, a match id, the details of a refusal) reaches the author's terminal with no
control characters in it, as the Python commands' output (tests/security/test_cli_hostile_servers.py):
a terminal would run an escape sequence a server put in a match id (a window title, a cleared screen,
a line rewritten to look like something else)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from arena.local.output import CONTROL
from arena.proto.ohell.v1 import gateway_pb2, gateway_pb2_grpc, match_pb2, matchmaker_pb2_grpc

from ..ladder.test_examples import NODE_DIR, node_ready

pytestmark = pytest.mark.slow  # node and its packages

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b1A"


class HostileGateway(gateway_pb2_grpc.AgentGatewayServiceServicer):
    def Connect(self, request_iterator: Any, context: grpc.ServicerContext) -> Iterator[gateway_pb2.ConnectResponse]:
        notice = match_pb2.Notice(code=f"CODE{ESCAPES}", message=f"message{ESCAPES}")
        yield gateway_pb2.ConnectResponse(event=match_pb2.AgentEvent(notice=notice))
        started = match_pb2.MatchStarted(match_id=f"m{ESCAPES}1", seat=1)
        yield gateway_pb2.ConnectResponse(event=match_pb2.AgentEvent(match_started=started))
        gone = threading.Event()  # open until the bot leaves: the matchmaker's refusal ends it
        context.add_callback(gone.set)
        gone.wait(60)


class HostileMatchmaker(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def WatchQueue(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, f"refused{ESCAPES}")
        yield  # a generator: the stream's handler


def test_a_hostile_server_writes_no_control_characters_through_the_node_bot() -> None:
    node_ready()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    gateway_pb2_grpc.add_AgentGatewayServiceServicer_to_server(HostileGateway(), server)
    matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(HostileMatchmaker(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        address = f"127.0.0.1:{port}"
        command = ["node", str(NODE_DIR / "bot.js"), address, address, "token-of-the-author", "main"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    finally:
        server.stop(None)
    said = result.stdout + result.stderr
    assert "message" in said and "refused" in said, said  # the server's words are shown ...
    assert not CONTROL.search(said), repr(said)  # ... without what a terminal would run
