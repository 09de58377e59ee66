"""``ohell challenge`` and ``ohell match show`` (a public command) pointed at a hostile engine service
or matchmaker: what they cannot use of the answer is a one-line error, and nothing of the server's
text reaches the author's terminal with control characters in it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli import main
from arena.local import tournament_cli
from arena.local.output import CONTROL
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, matchmaker_pb2, matchmaker_pb2_grpc, tournament_pb2

ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


class HostileEngine(challenge_pb2_grpc.ChallengeServiceServicer):
    def __init__(self, record_json: str) -> None:
        self.record_json = record_json

    def Challenge(self, request: challenge_pb2.ChallengeRequest, context: grpc.ServicerContext) -> object:
        response = challenge_pb2.ChallengeResponse(match_id=f"m{ESCAPES}1")
        response.record.json = self.record_json
        response.record.totals.extend([1, 2, 3])
        return response


def serving(add: Callable[[Any, grpc.Server], None], servicer: Any) -> Iterator[str]:
    """A real gRPC server on a free port holding ``servicer``: its address, until closed."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    add(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def hostile_engine(record_json: str) -> Iterator[str]:
    return serving(challenge_pb2_grpc.add_ChallengeServiceServicer_to_server, HostileEngine(record_json))


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


class HostileMatchmaker(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def __init__(self, record_json: str) -> None:
        self.record_json = record_json

    def GetMatch(self, request: matchmaker_pb2.GetMatchRequest, context: grpc.ServicerContext) -> object:
        reply = matchmaker_pb2.GetMatchResponse(record_json=self.record_json)
        reply.match.match_id, reply.match.state = request.match_id, "finished"
        return reply


def hostile_matchmaker(record_json: str) -> Iterator[str]:
    return serving(matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server, HostileMatchmaker(record_json))


@pytest.mark.parametrize(
    ("record_json", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "not a JSON match record (nested too deeply)"),
        ('{"seats": 5}', "a record this command cannot show (TypeError"),
        ('{"seats": [{"name": "a"}], "hands": [{"bids": []}]}', "a record this command cannot show (IndexError"),
    ],
    ids=["nested past the JSON reader's depth", "seats no list", "a hand without its seat's bid"],
)
def test_match_show_of_a_record_it_cannot_show_is_one_line(
    record_json: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, json.loads' RecursionError, or print_match's TypeError or IndexError on a record
    without the fields it reads, ended the command with a traceback."""
    address = next(matchmakers := hostile_matchmaker(record_json))
    try:
        code = main(["match", "show", "m-1", "--matchmaker", address, "--out", str(tmp_path / "m.json")])
    finally:
        matchmakers.close()
    err = "".join(capsys.readouterr().err.split("\n"))
    assert code == 2 and f"error: the matchmaker at {address}" in err and said in err, err
    assert not (tmp_path / "m.json").exists()


class EndlessExporter(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    """ExportTournament that sends 64 KiB pieces (escape sequences and bytes that are no UTF-8 among
    them) until the reader goes, or ``pieces`` of them."""

    def __init__(self, pieces: int | None = None) -> None:
        self.pieces = pieces

    def ExportTournament(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        data = (ESCAPES.encode() + b"\xff\xfe" + b"x" * 1000 + b"\n") * 64
        sent = 0
        while context.is_active() and (self.pieces is None or sent < self.pieces):
            yield tournament_pb2.ExportTournamentResponse(data=data)
            sent += 1


def export_from(exporter: EndlessExporter, *args: str) -> int:
    address = next(matchmakers := serving(matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server, exporter))
    try:
        return main(["tournament", "export", "t1", "--format", "json", "--matchmaker", address, *args])
    finally:
        matchmakers.close()


def test_an_export_without_end_stops_at_its_cap_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, ``--out`` took pieces for the stream's 600 s, as many as came: a disk filled."""
    monkeypatch.setattr(tournament_cli, "MAX_EXPORT_BYTES", 4 << 20)
    assert export_from(EndlessExporter(), "--out", str(tmp_path / "t1.json")) == 2
    assert "the export came to more than" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nor a hidden part of it


def test_an_export_that_would_fill_the_disk_stops_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tournament_cli, "MIN_FREE_BYTES", shutil.disk_usage(tmp_path).free + (4 << 20))
    assert export_from(EndlessExporter(), "--out", str(tmp_path / "t1.json")) == 2
    assert "free on the disk of --out" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_export_printed_has_no_control_characters_and_one_written_keeps_the_bytes_decoded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert export_from(EndlessExporter(pieces=3)) == 0
    printed = capsys.readouterr().out
    assert "?]0;pwned??[2J" in printed and not CONTROL.search(printed.replace("\n", ""))
    assert export_from(EndlessExporter(pieces=3), "--out", str(tmp_path / "t1.json")) == 0
    written = (tmp_path / "t1.json").read_text(encoding="utf-8")
    assert written.count("\ufffd\ufffd") == 3 * 64 and len(written) == 3 * 64 * (len(ESCAPES) + 2 + 1001)
