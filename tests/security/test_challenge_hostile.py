"""``ohell challenge`` pointed at a hostile engine service: what it cannot use of the answer is a
one-line error, and nothing of the server's text reaches the author's terminal with control
characters in it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from arena.cli import main
from arena.local.output import CONTROL
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc

ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


class HostileEngine(challenge_pb2_grpc.ChallengeServiceServicer):
    def __init__(self, record_json: str) -> None:
        self.record_json = record_json

    def Challenge(self, request: challenge_pb2.ChallengeRequest, context: grpc.ServicerContext) -> object:
        response = challenge_pb2.ChallengeResponse(match_id=f"m{ESCAPES}1")
        response.record.json = self.record_json
        response.record.totals.extend([1, 2, 3])
        return response


def hostile_engine(record_json: str) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    challenge_pb2_grpc.add_ChallengeServiceServicer_to_server(HostileEngine(record_json), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0)


@pytest.mark.parametrize(
    "record_json",
    ["[" * 100_000 + "]" * 100_000, "{not json", "null"],
    ids=["nested past the JSON reader's depth", "not JSON", "JSON but no record"],
)
def test_a_record_that_is_no_json_record_is_one_line_and_writes_nothing(
    record_json: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, json.loads' RecursionError or JSONDecodeError ended the command with a traceback."""
    out = tmp_path / "record.json"
    address = next(engines := hostile_engine(record_json))
    try:
        code = main(["challenge", "--token", "x", "--seat", "builtin:random", "--address", address, "--out", str(out)])
    finally:
        engines.close()
    captured = capsys.readouterr()
    assert code == 2 and "error:" in captured.err and "not a JSON match record" in captured.err, captured.err
    assert not out.exists()


def test_the_servers_match_id_is_printed_without_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, the summary line printed the match id as sent: escape sequences retitled or cleared the
    author's terminal."""
    address = next(engines := hostile_engine('{"match_id": "m"}'))
    try:
        code = main(["challenge", "--token", "x", "--seat", "builtin:random", "--address", address])
    finally:
        engines.close()
    printed = capsys.readouterr().out
    assert code == 0 and "match m?]0;pwned??[2J1: totals [1, 2, 3]" in printed, repr(printed)
    assert not CONTROL.search(printed)
