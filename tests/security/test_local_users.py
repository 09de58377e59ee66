"""Another user of the machine that runs ``ohell up`` (a shared teaching server: the students log
in where the host runs the ladder). 127.0.0.1 is every local user's: the embedded Redis answered
anyone on its port (deals of matches in play, an endpoint agent's token in clear, the token
table anyone could add a hash to), its append-only file was readable by all in the data folder,
and a password given in ``--redis-url`` stood on the engine's and the matchmaker's command lines,
which ``ps`` shows to everyone."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.local.config import host_token
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata
from ohell.errors import OhHellError


def command_lines(pid: int) -> list[str]:
    """The command lines ``ps`` shows of ``pid`` and every process under it."""
    lines = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            lines += command_lines(int(child))
    return lines


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("data")
    (data / "redis").mkdir(mode=0o755)  # as an earlier ohell up left it: no password, its data on disk
    data.chmod(0o755)  # and its folder, archive and logs readable by every user
    for name in ("archive.sqlite3", "matchmaker.log"):
        (data / name).touch(mode=0o644)
    with EmbeddedRedis(data_dir=str(data / "redis")) as earlier, redis.Redis.from_url(earlier.url) as client:
        RedisStore(client).create_ladder(Ladder("earlier", seats=3))
    config = StackConfig(log_dir=str(data), builtin_workers=0, remote_worker=False, save_host_token=False)
    started = Stack(config).start()
    yield started
    started.cleanup(graceful=False)


def test_the_embedded_redis_answers_only_the_stack(stack: Stack) -> None:
    assert stack.redis is not None
    stranger = redis.Redis(port=stack.redis.port, socket_timeout=5, retry=Retry(NoBackoff(), 0))  # no 4 s of retries
    with pytest.raises(redis.AuthenticationError):
        stranger.hgetall("ohell:agent_tokens")
    with pytest.raises(redis.AuthenticationError):
        stranger.hset("ohell:agent_tokens", "a-hash-of-my-own", "a1")
    password = stack.redis.password
    assert len(password) >= 32
    processes = [stack.redis.process.pid] + [proc.popen.pid for proc in stack.procs]  # type: ignore[union-attr]
    shown = [line for pid in processes for line in command_lines(pid)]
    assert len(shown) >= 3 and not [line for line in shown if password in line], shown
    # the stack itself uses it: the matchmaker stores a ladder
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladder = pb.Ladder(name="kept", seats=4)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=auth_metadata(stack.host_token), timeout=10)
    assert redis.Redis.from_url(stack.redis_url).exists("ohell:ladder:kept")


def test_the_data_of_an_earlier_ohell_up_is_kept(stack: Stack) -> None:
    """A data folder of a version whose Redis asked for no password: its append-only file is read."""
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladders = stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders
    assert "earlier" in [ladder.name for ladder in ladders]


def test_an_earlier_data_folder_is_made_the_users_alone(stack: Stack) -> None:
    """Its folder, archive and logs, left readable by all (755, 644) by a version before 3 Dec 2026,
    and the logs the stack starts now."""
    assert stack.log_dir.stat().st_mode & 0o777 == 0o700
    assert stack.database_url.endswith("/archive.sqlite3")
    for name in ("archive.sqlite3", "matchmaker.log", "engine.log"):
        assert (stack.log_dir / name).stat().st_mode & 0o777 == 0o600, name


def test_a_shared_folder_is_refused_as_data_folder_and_left_as_it_was(tmp_path: Path) -> None:
    """``--data-dir /tmp``: the stack made it 700 (as root, /tmp itself), its *.log files 600."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "someone.log").touch(mode=0o644)
    with pytest.raises(OhHellError, match="every user may write in it"):
        Stack(StackConfig(log_dir=str(shared), builtin_workers=0, remote_worker=False, save_host_token=False))
    assert shared.stat().st_mode & 0o7777 == 0o1777
    assert (shared / "someone.log").stat().st_mode & 0o777 == 0o644
    # ohell up makes the host token before its stack: it was left in the shared folder
    with pytest.raises(OhHellError, match="every user may write in it"):
        host_token({"host_token_file": "", "data_dir": str(shared)}, {})
    assert not (shared / "host-token").exists()


@pytest.mark.parametrize("planted", ["fifo", "link", "hard link"])
def test_a_host_token_that_is_not_a_plain_file_of_the_users_is_not_read(tmp_path: Path, planted: str) -> None:
    """In a data folder a group may write in (one the stack makes 700 only once it starts) a FIFO held
    open and never written kept ``ohell up`` waiting for ever; a link or a second name of another
    file was read as the host token."""
    data = tmp_path / "data"
    data.mkdir(mode=0o770)
    data.chmod(0o770)
    path, other = data / "host-token", tmp_path / "elsewhere"
    other.write_text("a-token-another-user-chose-0123456789\n")
    if planted == "fifo":
        os.mkfifo(path)
        keeper = os.open(path, os.O_RDWR | os.O_NONBLOCK)  # a writer that never writes: a read would wait
    else:
        path.symlink_to(other) if planted == "link" else os.link(other, path)
    try:
        with pytest.raises(OhHellError, match=f"^{path} is not a file of yours alone: remove it"):
            host_token({"host_token_file": "", "data_dir": str(data)}, {})
    finally:
        if planted == "fifo":
            os.close(keeper)
    path.unlink()
    path.write_text("the-hosts-own-token-0123456789\n")
    path.chmod(0o600)
    assert host_token({"host_token_file": "", "data_dir": str(data)}, {}) == (
        "the-hosts-own-token-0123456789",
        str(path),
    )


def test_the_host_token_checked_is_the_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data folder's host-token was checked by its name (lstat), then opened by its name again:
    in a folder a group may write in, a link put there between the two was followed and its file read
    as the host token. (The name is made to pass the check here as it would have just before the swap.)"""
    data = tmp_path / "data"
    data.mkdir(mode=0o770)
    data.chmod(0o770)
    plain, other = tmp_path / "plain", tmp_path / "elsewhere"
    plain.write_text("the-hosts-own-token-0123456789\n")
    other.write_text("a-token-another-user-chose-0123456789\n")
    path = data / "host-token"
    path.symlink_to(other)
    seen_as_plain = os.lstat(plain)
    monkeypatch.setattr(Path, "lstat", lambda self: seen_as_plain if self == path else os.lstat(self))
    with pytest.raises(OhHellError, match=f"^{path} is not a file of yours alone: remove it"):
        host_token({"host_token_file": "", "data_dir": str(data)}, {})


def test_a_host_token_file_in_a_shared_folder_is_not_read(tmp_path: Path) -> None:
    """ohell up read the data folder's host-token before refusing a folder every user may write in:
    another user's file there was taken as the host token, and a FIFO they held open without
    writing kept ``ohell up --data-dir /tmp`` waiting for ever instead of being refused."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "host-token").write_text("a-token-another-user-chose-0123456789\n")
    with pytest.raises(OhHellError, match="every user may write in it"):
        host_token({"host_token_file": "", "data_dir": str(shared)}, {})


def test_the_data_of_the_embedded_redis_is_the_users_alone(stack: Stack) -> None:
    assert (stack.log_dir / "redis").stat().st_mode & 0o777 == 0o700
    url_file = stack.log_dir / "redis-url"
    assert url_file.stat().st_mode & 0o777 == 0o600
    assert url_file.read_text() == stack.redis_url + "\n"
    assert redis.Redis.from_url(url_file.read_text().strip()).ping()
    assert os.stat(stack.log_dir / "redis" / "appendonly.aof")  # the file kept in that folder


@pytest.mark.parametrize("planted", ["link", "hard link"])
def test_a_tournament_export_writes_through_nothing_planted_at_its_out(tmp_path: Path, planted: str) -> None:
    """``ohell tournament export --out /tmp/t.csv`` (and ``ohell match show --out``, which writes alike):
    a link another user put at that name (or a second
    name of a file, where hard links are not protected) had the file it names, maybe one of the
    host's, emptied and given the export."""
    from types import SimpleNamespace

    from arena.local.tournament_cli import cmd_export

    hosts = tmp_path / "hosts-notes.txt"
    hosts.write_text("kept\n")
    out = tmp_path / "t.csv"
    out.symlink_to(hosts) if planted == "link" else os.link(hosts, out)
    export = SimpleNamespace(stream=lambda method, **fields: [SimpleNamespace(data=b"entrant,rank\n")])
    args = SimpleNamespace(id="t", format="csv", replicates=0, out=str(out))
    said = "a link \\(give the file it names\\)" if planted == "link" else "not a file of its own"
    with pytest.raises(OhHellError, match=f"cannot write --out {out}: {said}"):
        cmd_export(export, args)  # type: ignore[arg-type]
    assert hosts.read_text() == "kept\n"
    out.unlink()
    assert cmd_export(export, args) == 0  # type: ignore[arg-type]
    assert out.read_text() == "entrant,rank\n"


def test_play_records_and_ladder_export_files_write_through_no_link(tmp_path: Path) -> None:
    """``ohell play --out DIR`` and ``ohell ladder export --out DIR`` wrote their files through a link
    another user put at one of their names (a folder under /tmp): the file it named was replaced."""
    from arena.local.export import MATCH_FILES, write_matches
    from arena.local.play import play_series
    from arena.rpc.files import files_written_whole
    from ohell.presets import preset_with_options

    hosts = tmp_path / "hosts-notes.txt"
    hosts.write_text("kept\n")
    records, export = tmp_path / "records", tmp_path / "export"
    for folder, name in ((records, "game-7.json"), (export, "results.csv")):
        folder.mkdir()
        (folder / name).symlink_to(hosts)
    rules = preset_with_options("classic", ["hand_sizes=[1]"])
    with pytest.raises(OSError, match="a link"):
        play_series(rules, ["random"] * 3, 1, 7, records)
    (export / "matches.jsonl").write_text("an earlier export\n")
    with pytest.raises(OSError, match="a link"), files_written_whole(export, MATCH_FILES) as files:
        write_matches(files, "main", iter([]))
    assert hosts.read_text() == "kept\n"
    assert (export / "matches.jsonl").read_text() == "an earlier export\n"  # not emptied before the refusal
    os.mkfifo(tmp_path / "fifo")  # no process reads it: open() says ENXIO, 'No such device or address'
    from arena.rpc.files import write_named_file

    with pytest.raises(OSError, match="not a file of its own"):
        write_named_file(tmp_path / "fifo", "x")
    (records / "game-7.json").unlink()
    play_series(rules, ["random"] * 3, 1, 7, records)
    assert json.loads((records / "game-7.json").read_text())["seed"] == 7


def test_a_tournament_export_to_the_terminal_carries_no_escape(capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell tournament export ID`` printed the matchmaker's bytes as they came: a byte that is not
    UTF-8 was a UnicodeDecodeError traceback, an escape sequence reached the terminal."""
    from types import SimpleNamespace

    from arena.local.tournament_cli import cmd_export

    export = SimpleNamespace(stream=lambda method, **fields: [SimpleNamespace(data=b"a\x1b[2Jb\xff\tc\n")])
    args = SimpleNamespace(id="t", format="csv", replicates=0, out="-")
    assert cmd_export(export, args) == 0  # type: ignore[arg-type]
    assert capsys.readouterr().out == "a?[2Jb\ufffd\tc\n"


def test_a_tournament_export_cut_midway_leaves_its_out_as_it_was(tmp_path: Path) -> None:
    """``ohell tournament export --out`` writes the pieces as they come (it held the whole export in
    memory, under the 30 s deadline of any command): a stream cut midway leaves the file that was
    there whole and no hidden copy; a character split between two pieces is written whole."""
    from types import SimpleNamespace

    from arena.local.admin_client import EXPORT_DEADLINE_S, TIMEOUT_S, deadline
    from arena.local.tournament_cli import cmd_export

    assert deadline("ExportTournament") == EXPORT_DEADLINE_S > TIMEOUT_S == deadline("GetTournament")
    out = tmp_path / "t.csv"
    out.write_text("an earlier export\n")
    text = "entrant,rank\nZoë,1\n".encode()
    split = text.index("ë".encode()) + 1  # inside the two bytes of ë

    def cut(method: str, **fields: object) -> Iterator[SimpleNamespace]:
        yield SimpleNamespace(data=text[:split])
        raise OhHellError("ExportTournament: UNAVAILABLE: the stream was cut")

    args = SimpleNamespace(id="t", format="csv", replicates=0, out=str(out))
    with pytest.raises(OhHellError, match="the stream was cut"):
        cmd_export(SimpleNamespace(stream=cut), args)  # type: ignore[arg-type]
    assert out.read_text() == "an earlier export\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.csv"]
    whole = SimpleNamespace(
        stream=lambda method, **fields: iter([SimpleNamespace(data=text[:split]), SimpleNamespace(data=text[split:])])
    )
    assert cmd_export(whole, args) == 0  # type: ignore[arg-type]
    assert out.read_text(encoding="utf-8") == "entrant,rank\nZoë,1\n"


def test_a_ladder_export_through_the_stack_checks_all_its_files_first(tmp_path: Path) -> None:
    """``ohell ladder export --out DIR`` with the stack up wrote leaderboard.csv before it found a link
    at results.csv and refused: the folder then held a new leaderboard beside the old matches."""
    from types import SimpleNamespace

    from arena.local.export import from_stack

    out = tmp_path / "export"
    out.mkdir()
    (out / "leaderboard.csv").write_text("an earlier export\n")
    (out / "results.csv").symlink_to(tmp_path / "hosts-notes.txt")
    host = SimpleNamespace(call=lambda method, **fields: None, pages=lambda method, field, **fields: iter([]))
    args = SimpleNamespace(ladder="main", out=str(out), limit=0)
    with pytest.raises(OSError, match="a link"):
        from_stack(host, args)  # type: ignore[arg-type]
    assert (out / "leaderboard.csv").read_text() == "an earlier export\n"
    (out / "results.csv").unlink()
    assert from_stack(host, args) == 0  # type: ignore[arg-type]
    assert (out / "leaderboard.csv").read_text().startswith("rank,agent_id,name")


def test_a_ladder_export_the_stack_left_midway_writes_no_file(tmp_path: Path) -> None:
    """``ohell ladder export`` through the stack lost at its third GetMatch left leaderboard.csv whole
    and matches.jsonl, results.csv cut at two matches, under an Unreachable error that did not say so."""
    from types import SimpleNamespace

    from arena.local.admin_client import Unreachable
    from arena.local.export import from_stack

    out = tmp_path / "export"
    out.mkdir()
    for name in ("leaderboard.csv", "matches.jsonl"):
        (out / name).write_text("an earlier export\n")
    (out / "matches.jsonl").chmod(0o640)
    summaries = [SimpleNamespace(match_id=f"m{n}", agent_ids=["a1", "a2", "a3"], finished_ms=n) for n in range(3)]
    record = {"match_id": "m", "seats": [], "hands": []}
    fetched: list[str] = []

    def call(method: str, **fields: Any) -> Any:
        if method == "GetMatch":
            fetched.append(fields["match_id"])
            if len(fetched) == 3 and lost:
                raise Unreachable("cannot reach the matchmaker")
        return SimpleNamespace(record_json=json.dumps(record))

    pages = {"GetLeaderboard": [], "ListMatches": summaries}
    host = SimpleNamespace(call=call, pages=lambda method, field, **fields: iter(pages[method]))
    args = SimpleNamespace(ladder="main", out=str(out), limit=0)
    lost = True
    with pytest.raises(Unreachable):
        from_stack(host, args)  # type: ignore[arg-type]
    assert fetched == ["m2", "m1", "m0"]
    assert sorted(os.listdir(out)) == ["leaderboard.csv", "matches.jsonl"]  # no partial file left beside them
    assert (out / "leaderboard.csv").read_text() == (out / "matches.jsonl").read_text() == "an earlier export\n"
    lost = False
    assert from_stack(host, args) == 0  # type: ignore[arg-type]
    assert sorted(os.listdir(out)) == ["leaderboard.csv", "matches.jsonl", "results.csv"]
    assert len((out / "matches.jsonl").read_text().splitlines()) == 3
    assert (out / "matches.jsonl").stat().st_mode & 0o777 == 0o640  # the mode it had, as when written in place
    assert (out / "results.csv").stat().st_mode & 0o777 == 0o666 & ~current_umask()


def test_an_export_over_files_of_600_writes_no_copy_others_may_read(tmp_path: Path) -> None:
    """The export's hidden copies were made 666 less the umask and given the mode of the file they
    replace only once written: over a leaderboard.csv of 600, anyone could open the copy meanwhile (and
    read the whole export through that descriptor); a new file is still made as open() makes one."""
    from arena.rpc.files import files_written_whole

    (tmp_path / "leaderboard.csv").write_text("an earlier export\n")
    (tmp_path / "leaderboard.csv").chmod(0o600)
    mask = os.umask(0o022)
    try:
        with files_written_whole(tmp_path, ("leaderboard.csv", "results.csv")) as files:
            files["leaderboard.csv"].write("rank\n")
            modes = {path.name.split(".")[1]: path.stat().st_mode & 0o777 for path in tmp_path.glob(".*.partial")}
    finally:
        os.umask(mask)
    assert modes == {"leaderboard": 0o600, "results": 0o644}, modes
    assert (tmp_path / "leaderboard.csv").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "results.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "leaderboard.csv").read_text() == "rank\n"


KILLED_MIDWAY = """
import os, signal, sys
from pathlib import Path
from arena.rpc.files import files_written_whole
with files_written_whole(Path(sys.argv[1]), ("leaderboard.csv", "results.csv")) as files:
    files["leaderboard.csv"].write("half")
    files["leaderboard.csv"].flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_hidden_copies_of_an_export_killed_outright_are_removed_by_the_next(tmp_path: Path) -> None:
    """SIGKILL runs no clean-up: each export killed so left its hidden copies beside the files, for good.
    The next export into the folder removes those of the files it writes, and nothing else: not a copy
    an export still running holds, not another name, not another file's."""
    import fcntl
    import subprocess
    import sys

    from arena.rpc.files import files_written_whole

    root = Path(__file__).resolve().parents[2]
    lefts: list[set[str]] = []
    for _ in range(2):  # the second export killed removes the first's copies, then leaves its own
        done = subprocess.run([sys.executable, "-c", KILLED_MIDWAY, str(tmp_path)], cwd=root, timeout=60)
        assert done.returncode == -9
        lefts.append({path.name for path in tmp_path.iterdir()})
    left = lefts[-1]
    assert len(left) == 2 and all(name.endswith(".partial") for name in left) and not left & lefts[0], lefts
    kept = ["notes.txt", ".notes.txt.0123abcd.partial", ".results.csv.draft.partial", ".results.csv.0123abcd.partial"]
    for name in kept:
        (tmp_path / name).write_text("someone else's\n")
    os.mkfifo(tmp_path / ".leaderboard.csv.00000000.partial")  # no file of ours: neither opened nor removed
    kept.append(".leaderboard.csv.00000000.partial")
    with open(tmp_path / ".results.csv.0123abcd.partial") as running:  # an export in progress holds its copy locked
        fcntl.flock(running, fcntl.LOCK_EX)
        with files_written_whole(tmp_path, ("leaderboard.csv", "results.csv")) as files:
            files["leaderboard.csv"].write("rank\n")
            ours = {path.name for path in tmp_path.glob(".*.partial")} - set(kept)
    assert len(ours) == 2 and not ours & set(left)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([*kept, "leaderboard.csv", "results.csv"])
    assert (tmp_path / "leaderboard.csv").read_text() == "rank\n"


def test_an_export_to_a_file_system_without_locks_writes_its_files_and_leaves_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where flock has no locks to give (ENOLCK: NFS without its lock manager; this machine has no such
    mount, so flock is made to answer so), every export failed once exports locked their hidden copies,
    and left its copy behind, empty, for good: the next export cannot lock it to see it is stale either."""
    import errno
    import fcntl

    from arena.rpc.files import files_written_whole

    stale = tmp_path / ".results.csv.0123abcd.partial"
    stale.write_text("an export killed outright\n")

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with files_written_whole(tmp_path, ("leaderboard.csv", "results.csv")) as files:
        files["leaderboard.csv"].write("rank\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == [stale.name, "leaderboard.csv", "results.csv"]
    assert (tmp_path / "leaderboard.csv").read_text() == "rank\n"  # the stale copy: not known to be stale

    def failing(descriptor: int, operation: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fcntl, "flock", failing)  # any other failure: the export fails, its copy removed
    with pytest.raises(OSError, match="Input/output"), files_written_whole(tmp_path, ("leaderboard.csv",)):
        pass
    assert sorted(path.name for path in tmp_path.iterdir()) == [stale.name, "leaderboard.csv", "results.csv"]


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_ohell_play_names_the_record_file_it_refused_and_an_out_that_is_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell play --out DIR`` refused a link at one of its records as 'cannot write records to --out DIR:
    a link', naming no file of the folder; an --out naming a file was 'File exists' (mkdir's words)."""
    from arena.cli import main

    records = tmp_path / "records"
    records.mkdir()
    (records / "game-2.json").symlink_to(tmp_path / "hosts-notes.txt")
    play = ["play", "--bots", "random,random,random", "--option", "hand_sizes=[1]", "--games", "2"]
    assert main([*play, "--out", str(records)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: cannot write records to --out {records}: {records / 'game-2.json'}: a link" in err, err
    assert not (tmp_path / "hosts-notes.txt").exists()
    (tmp_path / "notes").write_text("kept\n")
    assert main([*play, "--out", str(tmp_path / "notes")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err == f"error: --out {tmp_path / 'notes'} is a file: give a folder (made when missing)", err
    assert (tmp_path / "notes").read_text() == "kept\n"
