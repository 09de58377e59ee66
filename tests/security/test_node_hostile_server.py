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


def run_node_bot(
    gateway: gateway_pb2_grpc.AgentGatewayServiceServicer, matchmaker: matchmaker_pb2_grpc.MatchmakerServiceServicer
) -> str:
    """What the Node.js bot printed (stdout, then stderr), run to its end against these services."""
    node_ready()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    gateway_pb2_grpc.add_AgentGatewayServiceServicer_to_server(gateway, server)
    matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(matchmaker, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        address = f"127.0.0.1:{port}"
        command = ["node", str(NODE_DIR / "bot.js"), address, address, "token-of-the-author", "main"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    finally:
        server.stop(None)
    return result.stdout + result.stderr


def test_a_hostile_server_writes_no_control_characters_through_the_node_bot() -> None:
    said = run_node_bot(HostileGateway(), HostileMatchmaker())
    assert "message" in said and "refused" in said, said  # the server's words are shown ...
    assert not CONTROL.search(said), repr(said)  # ... without what a terminal would run


class EmptyDecisions(gateway_pb2_grpc.AgentGatewayServiceServicer):
    """Asks for a bid with no legal bids, a card with no legal cards, then a bid it can answer; keeps
    each action the bot sends, and sets ``done`` on the answer to the last (or the bot leaving)."""

    def __init__(self) -> None:
        self.actions: list[match_pb2.Action] = []
        self.done = threading.Event()

    def Connect(self, request_iterator: Any, context: grpc.ServicerContext) -> Iterator[gateway_pb2.ConnectResponse]:
        threading.Thread(target=self._read, args=(request_iterator,), daemon=True).start()
        bid, play = match_pb2.DECISION_KIND_BID, match_pb2.DECISION_KIND_PLAY
        for decision_id, kind, legal_bids in ((1, bid, []), (2, play, []), (3, bid, [0, 1])):
            decision = match_pb2.DecisionRequest(
                match_id="m-1", decision_id=decision_id, kind=kind, legal_bids=legal_bids, observation={}
            )
            yield gateway_pb2.ConnectResponse(event=match_pb2.AgentEvent(decision=decision))
        self.done.wait(60)

    def _read(self, requests: Any) -> None:
        try:
            for request in requests:
                self.actions.append(request.action)
                if request.action.decision_id == 3:
                    break
        except grpc.RpcError:
            pass
        self.done.set()


class RefuseOnceAnswered(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    """Refuses the bot's ticket (so it exits) once the gateway has what the bot answered."""

    def __init__(self, done: threading.Event) -> None:
        self.done = done

    def WatchQueue(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        self.done.wait(60)
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "enough")
        yield


def test_the_node_bot_leaves_a_decision_with_nothing_to_choose_unanswered() -> None:
    """A decision with no legal bids made the bot's default bid Math.min() of nothing, Infinity, and
    one with no legal cards an action with no card; it says which field was empty and answers nothing,
    as the Python SDK does (arena/sdk/connection.py), and goes on answering the next decision."""
    gateway = EmptyDecisions()
    said = run_node_bot(gateway, RefuseOnceAnswered(gateway.done))
    assert [(action.decision_id, action.WhichOneof("choice")) for action in gateway.actions] == [(3, "bid")], said
    assert "decision 1 of match m-1 offers no legal_bids: left unanswered" in said, said
    assert "decision 2 of match m-1 offers no legal_cards: left unanswered" in said, said
