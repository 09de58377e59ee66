"""``ohell up`` twice on the same data folder and fixed ports: the banner shows this run's addresses,
they answer, and what the first run stored (a ladder, the host token) is there in the second."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis

from arena.cli import build_parser, main
from arena.embedded_redis import EmbeddedRedis, free_port
from arena.local.cli import up_config
from arena.local.config import resolve
from arena.local.stack import Proc, Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata
from arena.rpc.settings import shown_url
from ohell.errors import OhHellError


def start_up(
    args: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    env = env or {k: v for k, v in os.environ.items() if not k.startswith("OHELL_") and k != "REDIS_URL"}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "up", *args], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd
        )
    deadline = time.monotonic() + 90
    while "Ctrl-C stops everything." not in log.read_text():
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    return process, log.read_text()


def up_on_free_ports(data: Path, redis_port: int) -> subprocess.CompletedProcess[str]:
    """``ohell up`` on ``data`` and ``redis_port``, every service on a free port, run to its end (a
    refusal: these tests never let it start)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OHELL_") and k != "REDIS_URL"}
    args = ["--data-dir", str(data), "--redis-port", str(redis_port), "--web-address", "127.0.0.1:0"]
    args += ["--engine-address", "127.0.0.1:0", "--matchmaker-address", "127.0.0.1:0"]
    command = [sys.executable, "-m", "arena.cli", "up", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)
    process.wait(30)


@pytest.mark.slow
def test_up_restarts_on_the_same_data_and_addresses(tmp_path: Path) -> None:
    ports = {name: free_port() for name in ("engine", "matchmaker", "web", "redis")}
    config = tmp_path / "ohell.toml"
    config.write_text(f'web_address = "127.0.0.1:{ports["web"]}"\nworkers = 1\nconcurrency = 1\nbatch = 3\n')
    args = ["--config", str(config), "--data-dir", str(tmp_path / "data"), "--redis-port", str(ports["redis"])]
    args += ["--engine-address", f"127.0.0.1:{ports['engine']}"]
    args += ["--matchmaker-address", f"127.0.0.1:{ports['matchmaker']}"]
    banners = []
    for run in range(3):
        # the third run lets the engine take any port: its banner must show that port, not the
        # one the earlier runs wrote into the same engine.log
        extra = ["--engine-address", "127.0.0.1:0"] if run == 2 else []
        if run == 1:  # as a version before 3 Dec 2026 left its data folder: archive and logs readable by all
            (tmp_path / "data").chmod(0o755)
            for name in ("archive.db", "engine.log", "matchmaker.log"):
                (tmp_path / "data" / name).chmod(0o644)
        process, banner = start_up(args + extra, tmp_path / f"up-{run}.log")
        try:
            banners.append(banner)
            assert re.search(rf"^web\s+http://127\.0\.0\.1:{ports['web']}\s", banner, re.M), banner
            assert "built-in matches in batches of up to 3" in banner, banner  # the matchmaker's --batch
            engine_port = int(re.search(r"^engine\s+127\.0\.0\.1:(\d+)\s", banner, re.M).group(1))  # type: ignore[union-attr]
            assert (engine_port == ports["engine"]) == (run < 2), banner
            with socket.create_connection(("127.0.0.1", engine_port), timeout=5):
                pass
            assert re.search(rf"^matchmaker\s+127\.0\.0\.1:{ports['matchmaker']}\s", banner, re.M), banner
            for name in ("engine.sock", "matchmaker.sock"):
                assert f"\nsocket      unix:{tmp_path / 'data' / name}   (" in banner, banner
            with urllib.request.urlopen(f"http://127.0.0.1:{ports['web']}/healthz", timeout=5) as reply:
                assert reply.status == 200
            with grpc.insecure_channel(f"127.0.0.1:{ports['matchmaker']}") as channel:
                stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
                if run == 0:
                    ladder = pb.Ladder(name="kept", rules=rules_pb2.Rules(preset="classic"), seats=4)
                    host = auth_metadata((tmp_path / "data" / "host-token").read_text().strip())
                    stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
                names = [ladder.name for ladder in stub.ListLadders(pb.ListLaddersRequest()).ladders]
                assert names == ["kept"]
        finally:
            stop(process)
    token_file = tmp_path / "data" / "host-token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700
    for name in ("archive.db", "engine.log", "matchmaker.log", "web.log"):
        assert (tmp_path / "data" / name).stat().st_mode & 0o777 == 0o600, name
    assert all(f"host token  {token_file}" in banner for banner in banners)
    # which config file the settings came from (a host with a misnamed one could not tell it was not read)
    assert all(f"\nconfig      {config}   (" in banner for banner in banners)
    # where a host signs in on the web app with it (the banner only said how to send it over gRPC)
    assert all(f"(web sign-in: http://127.0.0.1:{ports['web']}/host;" in banner for banner in banners)
    assert (tmp_path / "data" / "engine.log").read_text().count("service on port") == 3  # one log, every run


@pytest.mark.slow
def test_the_host_commands_find_the_stack_ohell_toml_put_elsewhere(tmp_path: Path) -> None:
    """With ``data_dir`` in ./ohell.toml (and no $OHELL_DATA_DIR) the host commands run in the same
    folder looked for the socket, the host token and the Redis URL in the default data folder: "no
    host token", a stack "not running". They find them where ``ohell up`` put them."""
    data = tmp_path / "data"
    config = tmp_path / "ohell.toml"
    ports = {name: free_port() for name in ("matchmaker", "redis")}
    config.write_text(
        f'data_dir = "{data}"\nmatchmaker_address = "127.0.0.1:{ports["matchmaker"]}"\n'
        f'redis_port = {ports["redis"]}\nweb_address = "127.0.0.1:0"\nengine_address = "127.0.0.1:0"\n'
        "workers = 1\nconcurrency = 1\n"
    )
    config.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OHELL_") and k != "REDIS_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")  # the default data folder: empty
    process, banner = start_up([], tmp_path / "up.log", cwd=tmp_path, env=env)
    try:
        assert f"\nsocket      unix:{data / 'matchmaker.sock'}   (" in banner, banner

        def ohell(*args: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "arena.cli", *args]
            return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)

        created = ohell("ladder", "create", "found", "--seats", "4")
        assert created.returncode == 0, created.stdout + created.stderr
        listed = ohell("ladder", "list")
        assert "found" in listed.stdout, listed.stdout + listed.stderr
        os.remove(data / "matchmaker.sock")  # no socket: ohell.toml's TCP address
        assert "found" in ohell("ladder", "list").stdout
        rebuilt = ohell("ladder", "rebuild", "--ladder", "found")  # its Redis URL from the data folder
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    finally:
        stop(process)


@pytest.mark.slow
def test_up_in_a_data_folder_too_deep_for_a_socket_starts_without_one(tmp_path: Path) -> None:
    """A unix socket's path has at most 107 bytes: the matchmaker refuses a longer one, and ``ohell up``
    goes on without the socket rather than fail, saying so."""
    data = tmp_path / ("d" * 60) / ("e" * 60)
    args = ["--data-dir", str(data), "--redis-port", str(free_port()), "--web-address", "127.0.0.1:0"]
    args += ["--engine-address", "127.0.0.1:0", "--matchmaker-address", "127.0.0.1:0", "--concurrency", "1"]
    process, banner = start_up(args, tmp_path / "up.log")
    try:
        for name, users in (("engine.sock", "the bot commands"), ("matchmaker.sock", "the host and bot commands")):
            path = data / name
            line = f"\nsocket      none: unix socket {path}: the path is {len(str(path))} bytes, over the 107 "
            assert line in banner and f"{users} go over TCP (a shorter --data-dir)" in banner, banner
        port = re.search(r"^matchmaker\s+127\.0\.0\.1:(\d+)\s", banner, re.M).group(1)  # type: ignore[union-attr]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            assert list(stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders) == []
        assert not (data / "engine.sock").exists() and not (data / "matchmaker.sock").exists()
    finally:
        stop(process)


def children_of(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def descendants_of(pid: int) -> list[int]:
    """Children, their children (a worker's pool), and so on."""
    found = []
    for child in children_of(pid):
        found.append(child)
        with contextlib.suppress(FileNotFoundError):
            found += descendants_of(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"  # a zombie has exited
    except FileNotFoundError:  # reaped since the signal 0
        return False


@pytest.mark.slow
def test_a_second_ctrl_c_still_stops_every_process(tmp_path: Path) -> None:
    """A second Ctrl-C while ``ohell up`` stopped its processes (seconds) ended it there and left
    Redis, the engine and the matchmaker running on their ports: the next ``ohell up`` found them taken."""
    args = ["--data-dir", str(tmp_path / "data"), "--redis-port", str(free_port()), "--web-address", "127.0.0.1:0"]
    args += ["--engine-address", "127.0.0.1:0", "--matchmaker-address", "127.0.0.1:0", "--concurrency", "1"]
    process, _ = start_up(args, tmp_path / "up.log")
    children = children_of(process.pid)
    try:
        assert len(children) >= 5  # redis-server, engine, matchmaker, two workers, the web app
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while all(alive(pid) for pid in children):  # the stop has begun: the second Ctrl-C comes during it
            assert time.monotonic() < deadline
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        process.wait(60)
        assert [pid for pid in children if alive(pid)] == []
        assert "stopping every process of the stack" in (tmp_path / "up.log").read_text()
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):  # a worker leads its pool's group; redis-server leads none
                os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_the_processes_of_an_up_killed_by_sigkill_hold_its_data_folder(tmp_path: Path) -> None:
    """Only ``ohell up`` held up.lock: killed by SIGKILL (the OOM killer, kill -9) it left Redis, the
    services and the workers running on the data folder, and the next ``ohell up`` there was let
    start a second Redis on the same files."""
    from arena.local.cli import hold_data_folder

    data = tmp_path / "data"
    args = ["--data-dir", str(data), "--redis-port", str(free_port()), "--web-address", "127.0.0.1:0"]
    args += ["--engine-address", "127.0.0.1:0", "--matchmaker-address", "127.0.0.1:0", "--concurrency", "1"]
    process, _ = start_up(args, tmp_path / "up.log")
    children = children_of(process.pid)
    holders = descendants_of(process.pid)  # the workers' pool processes hold the lock too
    try:
        process.kill()
        process.wait(30)
        assert all(alive(pid) for pid in children)
        with pytest.raises(OhHellError, match=re.escape(f"`ohell up` that ended (pid {process.pid}: its Redis")):
            hold_data_folder(data)
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):  # a worker leads its pool's group; redis-server leads none
                os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in holders):  # a pool process killed with its group may end last
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.close(hold_data_folder(data))  # free once the last of them has ended


def test_settings_flags_over_env_over_file(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('engine_address = "0.0.0.0:1"\nweb_address = "0.0.0.0:2"\nworkers = 3\n')
    env = {"OHELL_WEB_ADDRESS": "127.0.0.1:3", "OHELL_DATA_DIR": str(tmp_path)}
    settings = resolve({"workers": 5}, env, str(config))
    assert settings["engine_address"] == "0.0.0.0:1" and settings["web_address"] == "127.0.0.1:3"
    assert settings["workers"] == 5 and settings["data_dir"] == str(tmp_path)
    assert resolve({}, {"OHELL_DATA_DIR": str(tmp_path)}, None)["matchmaker_address"] == "127.0.0.1:50052"
    assert resolve({}, {"OHELL_DATA_DIR": str(tmp_path)}, None)["batch"] == 6
    assert resolve({}, {"OHELL_MATCH_BATCH": "2"}, str(config))["batch"] == 2


@pytest.mark.parametrize("given", ["env", "file"])
def test_a_token_given_for_one_run_leaves_the_kept_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """``ohell up`` with $OHELL_HOST_TOKEN (or --host-token-file) set wrote that token over the one
    it had made on its first start and kept in the data folder: the kept token was lost for good."""
    for name in [name for name in os.environ if name.startswith("OHELL_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no ./ohell.toml
    kept = tmp_path / "data" / "host-token"
    kept.parent.mkdir()
    kept.write_text("kept-since-the-first-start-0123\n")
    args = ["up", "--data-dir", str(kept.parent)]
    if given == "env":
        monkeypatch.setenv("OHELL_HOST_TOKEN", "given-for-this-run-0123456")
    else:
        (tmp_path / "token").write_text("given-for-this-run-0123456\n")
        args += ["--host-token-file", str(tmp_path / "token")]
    config, _, source = up_config(build_parser().parse_args(args))
    stack = Stack(config)
    assert stack.host_token == "given-for-this-run-0123456" and source != str(kept)
    assert kept.read_text() == "kept-since-the-first-start-0123\n"


def test_a_short_token_is_refused_before_any_process_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OHELL_HOST_TOKEN=short ohell up`` started Redis and then said "engine did not get ready
    (exit 2)" above the engine's own refusal; a short $OHELL_WEB_TOKEN likewise."""
    with pytest.raises(OhHellError, match="^the host token is 5 characters: the services take one of at least 16$"):
        Stack(StackConfig(host_token="short", log_dir=str(tmp_path)))
    monkeypatch.setenv("OHELL_WEB_TOKEN", "short")
    with pytest.raises(OhHellError, match=r"^\$OHELL_WEB_TOKEN is 5 characters"):
        Stack(StackConfig(log_dir=str(tmp_path)))


@pytest.mark.slow
def test_a_taken_redis_port_is_one_line(tmp_path: Path) -> None:
    """A second ``ohell up`` on the default ports ended with redis-server's start-up banner ("O0OoO0Oo
    Redis is starting ...") and six lines of its log, cut mid-line, to say the port was taken."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = up_on_free_ports(tmp_path, port)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"error: the embedded Redis: port {port} is taken: redis-server cannot listen there (Address already in use);"
        " is another `ohell up` running? (--redis-port)"
    ], done.stderr


def test_up_help_names_each_default(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings with no default printed "default )"; the data folder's said "per user"."""
    monkeypatch.setenv("XDG_DATA_HOME", "/srv/data")
    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    with pytest.raises(SystemExit):
        main(["up", "--help"])
    text = capsys.readouterr().out
    assert "default )" not in text and "($REDIS_URL)" in text and "($OHELL_HOST_TOKEN_FILE)" in text
    assert "($OHELL_DATA_DIR; default /srv/data/ohell-arena)" in text


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("colour = 1\n", {}, "unknown setting 'colour'"),
        ("workers = 'two'\n", {}, "workers must be a whole number"),
        ("workers = [\n", {}, "config file"),
        ("web_address = 8080\n", {}, "web_address must be a string"),
        ("", {"OHELL_ENGINE_ADDRESS": "localhost"}, "engine-address must be HOST:PORT"),
        ("", {"OHELL_ENGINE_ADDRESS": "localhost:²"}, "engine-address must be HOST:PORT"),  # a digit, not to int()
        ("", {"OHELL_WORKERS": "0"}, "workers must be at least 1"),
        ("", {"OHELL_METRICS": "maybe"}, "metrics must be true or false"),
        ("batch = 33\n", {}, "batch must be from 1 to 32"),
        ("", {"OHELL_MATCH_BATCH": "0"}, "batch must be from 1 to 32"),
    ],
)
def test_bad_settings_are_named(tmp_path: Path, text: str, env: dict[str, str], message: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(text)
    with pytest.raises(OhHellError, match=re.escape(message)):
        resolve({}, env, str(config))


@pytest.mark.slow
def test_the_banner_hides_the_passwords_of_redis_and_the_archive(tmp_path: Path) -> None:
    """The banner printed the Redis and archive URLs whole: a password in either (a Redis with
    ``requirepass``, a Postgres archive) went to the terminal and to any log capturing it."""
    secret = "s3cret-redis-password"
    server = EmbeddedRedis().start()
    try:
        redis.Redis.from_url(server.url).config_set("requirepass", secret)
        url = server.url.replace("redis://", f"redis://:{secret}@")
        stale = tmp_path / "data" / "redis-url"  # of an earlier run on its embedded Redis
        stale.parent.mkdir()
        stale.write_text("redis://:an-earlier-password@127.0.0.1:6390/0\n")
        args = ["--data-dir", str(tmp_path / "data"), "--redis-url", url, "--workers", "1", "--concurrency", "1"]
        args += [f"--{name}-address=127.0.0.1:0" for name in ("engine", "matchmaker", "web")]
        process, banner = start_up(args, tmp_path / "up.log")
        stop(process)
    finally:
        server.cleanup()
    assert not stale.exists()  # ohell ladder rebuild would take it for this run's Redis
    assert secret not in banner and re.search(r"^redis\s+redis://:\*\*\*@127\.0\.0\.1:", banner, re.M), banner
    assert shown_url("postgresql://ohell:pw@db:5432/arena") == "postgresql://ohell:***@db:5432/arena"
    assert shown_url("sqlite:////var/ohell/archive.sqlite3") == "sqlite:////var/ohell/archive.sqlite3"


def test_a_process_that_does_not_get_ready_is_shown_in_whole_lines(tmp_path: Path) -> None:
    """The tail of its log began mid-line ("rror while attempting '", from a longer traceback)."""
    script = "print('x' * 99 + 'y'); [print(f'line {n}') for n in range(300)]"
    proc = Proc("talker", [sys.executable, "-c", script], dict(os.environ), tmp_path / "talker.log")
    try:
        with pytest.raises(RuntimeError) as refused:
            proc.wait_for("never printed", 30)
    finally:
        proc.stop()
    shown = str(refused.value).split("\n", 1)[1]
    assert shown.startswith("line ") and shown.rstrip().endswith("line 299") and len(shown) <= 1500


def test_a_second_up_on_the_same_data_folder_is_refused_before_it_starts_anything(tmp_path: Path) -> None:
    """Two stacks on one data folder shared its Redis files, archive and sockets: the second one's
    sockets replaced the first's, whose commands then reached the second stack. (The lock here is
    this test process's, held as a running ``ohell up`` holds it.)"""
    from arena.local.cli import hold_data_folder

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    lock = hold_data_folder(data)
    try:
        done = up_on_free_ports(data, free_port())
        assert done.returncode == 2 and done.stderr.splitlines() == [
            f"error: another `ohell up` (pid {os.getpid()}) is running on the data folder {data}: stop it, or give"
            " this one a --data-dir of its own"
        ], done.stderr
        assert not (data / "redis-url").exists() and not list(data.glob("*.sock"))  # nothing started
        # nor a host token made: the running stack would not take it, and the host commands read it
        assert not (data / "host-token").exists()
    finally:
        os.close(lock)
    os.close(hold_data_folder(data))  # free again once its holder is gone


def plant(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link":
        path.symlink_to(path.parent.parent / "elsewhere")
    else:  # a second name of a file of the host's: writing the pid emptied that file
        (path.parent.parent / "notes").write_text("kept\n")
        os.link(path.parent.parent / "notes", path)


def refusing(monkeypatch: pytest.MonkeyPatch, name: str, path: Path, code: int) -> None:
    """``os.NAME`` failing with ``code`` for ``path`` alone: what root cannot be refused (EACCES) and a
    read-only file system (EROFS), stood in for."""
    real = getattr(os, name)

    def failing(where: Any, *args: Any, **options: Any) -> Any:
        if Path(where) == path:
            raise OSError(code, os.strerror(code), str(where))
        return real(where, *args, **options)

    monkeypatch.setattr(os, name, failing)


def test_a_data_folder_the_system_refuses_is_said_in_one_line_with_advice_that_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data folder on a read-only file system was an EROFS traceback from claim_folder; one this user
    may not enter, a PermissionError traceback from the host token's look-up; and up.lock refused by a
    read-only file system or a folder not writable said 'remove it', which mends neither."""
    import errno

    from arena.local.cli import hold_data_folder
    from arena.local.config import claim_folder, host_token

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    with monkeypatch.context() as patched:
        patched.setattr(Path, "chmod", lambda self, mode: refusing_now(errno.EROFS, self))
        with pytest.raises(OhHellError) as said:
            claim_folder(data)
    assert str(said.value) == f"{data}: Read-only file system: give a --data-dir on a file system ohell up can write to"
    token = data / "host-token"
    with monkeypatch.context() as patched:
        for name in ("stat", "lstat"):
            refusing(patched, name, token, errno.EACCES)
        with pytest.raises(OhHellError) as said:
            host_token({"host_token_file": "", "data_dir": str(data)}, {})
    mine = "not yours to use (another user's, or in a folder you may not enter): give a --data-dir of your own"
    assert str(said.value) == f"{token}: Permission denied: {mine}"
    lock = data / "up.lock"
    for code, advice in (
        (errno.EROFS, "give a --data-dir on a file system ohell up can write to"),
        (errno.EACCES, mine),
    ):
        with monkeypatch.context() as patched:
            refusing(patched, "open", lock, code)
            with pytest.raises(OhHellError) as said:
                hold_data_folder(data)
        assert str(said.value) == f"{lock}: {os.strerror(code)}: {advice}"
    lock.write_text("")  # a file there this user may not write: removing it does mend that
    with monkeypatch.context() as patched:
        refusing(patched, "open", lock, errno.EACCES)
        with pytest.raises(OhHellError, match=r": Permission denied: not a file of yours to write: remove it \("):
            hold_data_folder(data)


def refusing_now(code: int, path: Path) -> None:
    raise OSError(code, os.strerror(code), str(path))


@pytest.mark.parametrize("kind", ["fifo", "folder", "link", "hard link"])
def test_a_lock_file_up_did_not_make_is_refused_and_left_alone(tmp_path: Path, kind: str) -> None:
    """A FIFO, folder or link at up.lock was a traceback (ftruncate's EINVAL, EISDIR, ELOOP); a
    second name of another file was emptied and given the pid."""
    from arena.local.cli import hold_data_folder

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    plant(data / "up.lock", kind)
    with pytest.raises(OhHellError, match=re.escape(f"{data / 'up.lock'}") + ".*: remove it"):
        hold_data_folder(data)
    assert not (tmp_path / "elsewhere").exists()
    if kind == "hard link":
        assert (tmp_path / "notes").read_text() == "kept\n"


def test_the_pid_said_of_a_held_lock_is_digits_alone(tmp_path: Path) -> None:
    """The holder's pid is read from up.lock: text there that is no pid (an escape sequence for the
    host's terminal) is not shown."""
    import fcntl

    from arena.local.cli import hold_data_folder

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "up.lock").write_bytes(b"\x1b]2;owned\x07\n")
    held = os.open(data / "up.lock", os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(OhHellError, match=r"another `ohell up` \(pid \?\)"):
            hold_data_folder(data)
    finally:
        os.close(held)


def test_a_service_that_ends_is_said_with_how_it_ended(tmp_path: Path) -> None:
    """``ohell up`` said only "stopping: engine exited" when a service ended: a crash (a status), the
    kernel's OOM killer (SIGKILL) and a kill by hand read the same. Now the signal or the status is named,
    the workers left out (the supervisor starts them again) and the embedded Redis watched too."""
    stack = Stack(StackConfig(log_dir=str(tmp_path)))
    try:
        waiting = [sys.executable, "-c", "import time; time.sleep(120)"]
        engine = stack._spawn("engine", waiting)
        matchmaker = stack._spawn("matchmaker", [sys.executable, "-c", "raise SystemExit(3)"])
        worker = Proc("worker builtin0", [sys.executable, "-c", "raise SystemExit(1)"], stack.env(), tmp_path / "w.log")
        stack.procs.append(worker)
        stack.workers.append(worker)
        stack.redis = stack._embedded_redis().start()
        matchmaker.popen.wait(30)
        worker.popen.wait(30)
        assert stack.ended_services() == ["matchmaker exited with status 3"]
        engine.kill()
        engine.popen.wait(30)
        assert stack.redis.process is not None
        stack.redis.process.kill()
        stack.redis.process.wait(30)
        assert stack.ended_services() == [
            "engine was killed by SIGKILL (signal 9)",
            "matchmaker exited with status 3",
            "redis was killed by SIGKILL (signal 9)",
        ]
    finally:
        stack.cleanup(graceful=False)


def supervised(tmp_path: Path, ends: int) -> Stack:
    """A stack whose one worker ends at once every time, supervised until it has ended ``ends`` times."""
    stack = Stack(StackConfig(log_dir=str(tmp_path)))
    worker = Proc("worker w", [sys.executable, "-c", "raise SystemExit(3)"], stack.env(), tmp_path / "w.log")
    stack.procs.append(worker)
    stack.workers.append(worker)
    supervisor = stack._supervisor = threading.Thread(target=stack._supervise, args=(0.05,))  # stop() joins it
    supervisor.start()
    try:
        deadline = time.monotonic() + 30
        while len(stack.worker_ends) < ends:
            assert time.monotonic() < deadline, stack.worker_ends
            time.sleep(0.05)
    finally:
        stack.stop(graceful=False)  # the supervisor ends before the logs close: no start on a closed log
    return stack


@pytest.mark.slow
def test_a_worker_the_supervisor_starts_again_is_said_with_how_it_ended(tmp_path: Path) -> None:
    """A worker that ended was started again without a word: one that ends at once every time (a
    broken environment) went on so unseen while no match was played; and it was started twice a
    second for ever. Now each quick end doubles the wait before the next start."""
    stack = supervised(tmp_path, 3)
    said = "worker w exited with status 3; started again in {} s (its log: " + str(tmp_path / "w.log") + ")"
    assert stack.worker_ends[:3] == [said.format(1), said.format(2), said.format(4)]
    assert stack.worker_restarts == 2  # the third start was still waiting out its 4 s


def test_a_worker_that_ran_a_while_is_started_again_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.local.stack

    monkeypatch.setattr(arena.local.stack, "RESTART_STABLE_S", 0.0)  # every run counts as a long one
    stack = supervised(tmp_path, 3)
    said = f"worker w exited with status 3; started again (its log: {tmp_path / 'w.log'})"
    assert stack.worker_ends[:3] == [said] * 3 and stack.worker_restarts >= 3


@pytest.mark.slow
def test_up_says_which_signal_ended_a_service(tmp_path: Path) -> None:
    args = ["--data-dir", str(tmp_path / "data"), "--redis-port", str(free_port()), "--web-address", "127.0.0.1:0"]
    args += ["--engine-address", "127.0.0.1:0", "--matchmaker-address", "127.0.0.1:0", "--concurrency", "1"]
    log = tmp_path / "up.log"
    process, _ = start_up(args, log)

    def child(word: bytes) -> int:
        (pid,) = [pid for pid in children_of(process.pid) if word in Path(f"/proc/{pid}/cmdline").read_bytes()]
        return pid

    try:
        os.killpg(child(b"ohell.builtin"), signal.SIGKILL)  # the worker and its pool: started again, said
        deadline = time.monotonic() + 30
        said = re.compile(r"worker builtin0 was killed by SIGKILL \(signal 9\); started again( in 1 s)? \(its log: ")
        while not said.search(log.read_text()):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        os.kill(child(b"services.engine"), signal.SIGKILL)
        assert process.wait(60) == 1
    finally:
        if process.poll() is None:
            stop(process)
    assert f"stopping: engine was killed by SIGKILL (signal 9) (logs in {tmp_path / 'data'})" in log.read_text()


def test_a_bad_setting_says_where_it_came_from(tmp_path: Path) -> None:
    """A setting is read from a flag, the environment or ohell.toml: "workers must be at least 1, got 0"
    left the host to find which of the three held the 0 (an old $OHELL_WORKERS, say)."""
    config = tmp_path / "c.toml"
    config.write_text("batch = 33\nconcurrency = 0\n")
    for flags, env, said in (
        ({}, {"OHELL_WORKERS": "0"}, "workers must be at least 1, got 0 (from $OHELL_WORKERS)"),
        ({"workers": 0}, {"OHELL_WORKERS": "2"}, "workers must be at least 1, got 0 (from --workers)"),
        ({}, {}, f"concurrency must be at least 1, got 0 (from concurrency in the config file {config})"),
        ({"concurrency": 1}, {}, f"batch must be from 1 to 32, got 33 (from batch in the config file {config})"),
        (
            {"concurrency": 1, "batch": 2},
            {"OHELL_WEB_ADDRESS": "localhost"},
            "web-address must be HOST:PORT with a port from 0 to 65535, got 'localhost' (from $OHELL_WEB_ADDRESS)",
        ),
    ):
        with pytest.raises(OhHellError) as refused:
            resolve(flags, env, str(config))
        assert str(refused.value) == said


def test_a_fault_of_the_users_own_ohell_toml_is_not_blamed_on_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """./ohell.toml unread as another user's may be fixed by naming it ($OHELL_CONFIG), and is told so;
    a syntax error or an unknown setting in the user's own file was told so too ('not read; name it
    with $OHELL_CONFIG ... to read it'), and naming it only gave the same error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ohell.toml").write_text("workers = \n")
    with pytest.raises(OhHellError) as refused:
        resolve({}, {})
    assert str(refused.value).startswith("config file ohell.toml: ") and "name it" not in str(refused.value)
    (tmp_path / "ohell.toml").write_text("wokers = 2\n")
    with pytest.raises(OhHellError, match="unknown setting 'wokers'") as refused:
        resolve({}, {})
    assert "name it" not in str(refused.value)


def test_a_data_folder_on_a_file_system_without_locks_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flock's ENOLCK (a network file system with no locking) was an OSError traceback."""
    import errno
    import fcntl

    from arena.local.cli import hold_data_folder

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with pytest.raises(OhHellError, match=r"up\.lock: cannot be locked \(No locks available\): give a --data-dir"):
        hold_data_folder(tmp_path)


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_data_dir_that_is_no_folder_is_one_line(tmp_path: Path, where: str) -> None:
    """``ohell up --data-dir FILE`` ended in a FileExistsError traceback from making the folder."""
    (tmp_path / "notes").write_text("kept\n")
    data = tmp_path / "notes" if where == "a file" else tmp_path / "notes" / "data"
    done = up_on_free_ports(data, free_port())
    said = f"{data} is a file: give a folder" if where == "a file" else f"{data}: Not a directory"
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"error: data folder {said}" + (" (made when missing)" if where == "a file" else "")
    ], done.stderr
    assert (tmp_path / "notes").read_text() == "kept\n"


def test_another_users_data_folder_is_refused_before_anything_is_made_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's data folder was found out only when the stack made it 700, after up.lock was
    made in it: a user who may not write there was told 'up.lock: Permission denied: remove it'. (Root
    may change any folder's mode: the refusal a user who is not its owner gets is stood in for here.)"""
    import errno

    from arena.local.cli import cmd_up

    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    real_chmod = Path.chmod

    def not_its_owner(self: Path, mode: int, **options: bool) -> None:
        if self == data:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(self))
        real_chmod(self, mode, **options)

    monkeypatch.setattr(Path, "chmod", not_its_owner)
    for name in [name for name in os.environ if name.startswith("OHELL_")]:
        monkeypatch.delenv(name)
    with pytest.raises(OhHellError, match=f"^data folder {data} is another user's: give one of your own$"):
        cmd_up(build_parser().parse_args(["up", "--data-dir", str(data)]))
    assert list(data.iterdir()) == []  # no up.lock, no host-token
