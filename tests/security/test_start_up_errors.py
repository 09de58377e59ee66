"""A careless host's configuration: a host token file that is missing or not text, a short token, a
malformed rate limit. Each service and ``ohell`` command says what is wrong in one line and stops,
with no traceback (they were a UnicodeDecodeError, a FileNotFoundError or a ValueError traceback)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from arena.cli import main
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.local.stack import write_secret
from arena.play import relay
from arena.rpc.server import create_server
from arena.rpc.settings import ConfigError
from services.engine.server import start_engine

ROOT = Path(__file__).resolve().parents[2]
GOOD_TOKEN = "a-host-token-long-enough-0123"


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "token.bin"
    path.write_bytes(b"\xd0\xff\x00 not text")
    return path


def start(module: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OHELL_") and k != "REDIS_URL"}
    return subprocess.run(
        [sys.executable, "-m", module, "--address", "127.0.0.1:0", *args],
        cwd=ROOT,
        env=clean | {"OHELL_HOST_TOKEN": GOOD_TOKEN} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("module", ["services.engine", "services.matchmaker", "services.web"])
def test_a_host_token_file_that_is_not_text(module: str, binary: Path) -> None:
    one_line(start(module, "--host-token-file", str(binary)), str(binary), "not a text file")


def test_a_ratings_rebuild_finds_the_redis_of_ohell_up_in_its_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It took the URL only from --redis-url or $REDIS_URL, and docs/operations.md said to give it
    ``--redis-url "$(cat D/redis-url)"``: the embedded Redis's password on a command line, which
    ``ps`` shows to every user of the machine. It reads the data folder's file as the host
    commands read its host-token."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("OHELL_DATA_DIR", str(tmp_path))
    assert main(["ladder", "rebuild"]) == 2
    out = "".join(capsys.readouterr().err.split("\n"))
    assert "give --redis-url or set REDIS_URL" in out and str(tmp_path / "redis-url") in out, out
    with EmbeddedRedis(appendonly=False, password="the-stack-password-0123") as server:
        RedisStore(redis.Redis.from_url(server.url)).create_ladder(Ladder("class", seats=3))
        write_secret(tmp_path / "redis-url", server.url)
        assert main(["ladder", "rebuild"]) == 0
    assert "class: ratings rebuilt from 0 logged matches" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("module", ["services.engine", "services.matchmaker", "services.web"])
def test_an_empty_host_token_file(module: str, tmp_path: Path) -> None:
    """The service started with no host at all (every host command refused) and said nothing."""
    empty = tmp_path / "host-token"
    empty.write_text("\n")
    one_line(start(module, "--host-token-file", str(empty)), str(empty), "is empty")


@pytest.mark.slow
@pytest.mark.parametrize("module", ["services.engine", "services.matchmaker"])
def test_a_missing_host_token_file(module: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    one_line(start(module, "--host-token-file", str(missing)), str(missing), "No such file")


@pytest.mark.slow
@pytest.mark.parametrize("module", ["services.engine", "services.matchmaker"])
@pytest.mark.parametrize(
    ("env", "word"),
    [
        ({"OHELL_HOST_TOKEN": "short"}, "host token"),
        ({"OHELL_WEB_TOKEN": "short"}, "web app's token"),
        ({"OHELL_RATE_LIMIT": "fast"}, "OHELL_RATE_LIMIT"),
    ],
)
def test_a_short_token_or_a_malformed_limit(module: str, env: dict[str, str], word: str) -> None:
    nowhere = ("--redis-url", "redis://127.0.0.1:1") if module == "services.matchmaker" else ()  # not reached
    one_line(start(module, *nowhere, **env), word)


@pytest.mark.parametrize("port", ["²", "99999"])  # a digit to str.isdigit but not to int(); no port
def test_the_web_app_at_an_address_it_cannot_listen_on(port: str) -> None:
    one_line(start("services.web", "--address", f"127.0.0.1:{port}"), "--address", port)


def test_a_host_command_with_a_token_file_that_is_not_text(binary: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "list", "--matchmaker", "127.0.0.1:1", "--host-token-file", str(binary)]) == 2
    out = "".join(capsys.readouterr().err.split("\n"))
    assert "not a text file" in out and str(binary) in out


def test_the_engine_with_no_redis_at_its_url(tmp_path: Path) -> None:
    """It ended in redis-py's ConnectionError traceback (and a password in the URL would be shown)."""
    done = start("services.engine", "--redis-url", "redis://:pw-secret@127.0.0.1:1/0")
    one_line(done, "cannot reach Redis at redis://:***@127.0.0.1:1/0")
    assert "pw-secret" not in done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--redis-url", "nonsense"], ["--redis-url nonsense", "scheme"]),
        (["--ladder", "x", "--from", "archive", "--database-url", "nonsense://"], ["--database-url nonsense://"]),
        (["--ladder", "x", "--from", "archive", "--database-url", "sqlite:////no/such/dir/a.db"], ["--database-url"]),
        pytest.param(  # the Redis client tries again for some 8 s
            ["--redis-url", "redis://:pw-secret@127.0.0.1:1/0"],
            ["cannot reach Redis at redis://:***@127.0.0.1:1/0"],
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_ratings_rebuild_that_cannot_reach_its_stores_is_one_line(
    args: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell ladder rebuild`` ended in a traceback: redis-py's ValueError or ConnectionError, SQLAlchemy's
    NoSuchModuleError, a FileNotFoundError."""
    assert main(["ladder", "rebuild", "--redis-url", "redis://127.0.0.1:1/0", *args]) == 2
    out = "".join(capsys.readouterr().err.split("\n"))
    assert "error:" in out and all(word in out for word in words) and "pw-secret" not in out, out


@pytest.mark.parametrize(("given", "words"), [("", "asks for a password the URL does not give"), (":nope@", "refused")])
def test_a_ratings_rebuild_without_the_password_of_its_redis_says_so(
    given: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell up``'s Redis asks for a password: the URL without it said "cannot reach Redis at ...:
    HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user>
    <pass> option can be used ..."; it now says what is missing and where ``ohell up`` keeps it."""
    with EmbeddedRedis(appendonly=False, password="the-stack-password-0123") as server:
        assert main(["ladder", "rebuild", "--redis-url", f"redis://{given}127.0.0.1:{server.port}/0"]) == 2
    out = "".join(capsys.readouterr().err.split("\n"))
    assert f"Redis at redis://{given.replace('nope', '***')}127.0.0.1:{server.port}/0 {words}" in out, out
    assert "data folder's file redis-url" in out and "HELLO" not in out and "nope" not in out, out


@pytest.mark.slow
@pytest.mark.parametrize("module", ["services.engine", "services.matchmaker"])
def test_a_grpc_service_at_an_address_it_cannot_parse(module: str) -> None:
    """A usage error, as argparse gives one: the usage, then one line naming the flag."""
    nowhere = ("--redis-url", "redis://127.0.0.1:1") if module == "services.matchmaker" else ()  # not reached
    done = start(module, *nowhere, "--address", "127.0.0.1:²")
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.startswith("usage: "), done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert (
        last
        == f"python -m {module}: error: argument --address: '127.0.0.1:²' must be HOST:PORT with a port from 0 to 65535"
    )


def test_a_grpc_service_on_a_port_another_process_serves_refuses_to_start() -> None:
    """gRPC's SO_REUSEPORT let a second engine bind an engine's port without a word; the kernel
    then shared the agents' connections between the old process and the new one."""

    async def both() -> None:
        first = await create_server("127.0.0.1:0")
        try:
            with pytest.raises(ConfigError, match="another process listens there"):
                await create_server(f"127.0.0.1:{first.port}")
        finally:
            await first.server.stop(0)

    asyncio.run(both())


def test_an_engine_that_cannot_listen_lets_go_of_its_redis_connections(redis_server: EmbeddedRedis) -> None:
    """start_engine failing after its Redis clients were made (here: the port is another server's) left
    them open, the gateway's subscriber connection with them, and the gateway among the process's."""
    watcher = redis.Redis.from_url(redis_server.url)
    gateways = len(relay._LOCAL_GATEWAYS)

    def others() -> list[str]:
        mine = str(watcher.client_id())
        return [entry["cmd"] for entry in watcher.client_list() if entry["id"] != mine]

    async def run() -> None:
        first = await create_server("127.0.0.1:0")
        try:
            with pytest.raises(ConfigError, match="another process listens there"):
                await start_engine(f"127.0.0.1:{first.port}", redis_url=redis_server.url, host_token=GOOD_TOKEN)
            assert others() == [] and len(relay._LOCAL_GATEWAYS) == gateways
        finally:
            await first.server.stop(0)

    assert others() == []
    asyncio.run(run())
    watcher.close()


# The child caps its own address space, then runs the CLI: a reader that takes /dev/zero whole fails
# fast, not the machine. Not a preexec_fn: Python code between fork and exec in a process that has
# started gRPC (this test worker) runs gRPC's fork handlers, and the child then died logging epoll errors.
UNDER_1_GIB = (
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
    "sys.argv[0] = 'ohell'; runpy.run_module('arena.cli', run_name='__main__')"
)


def ohell(*args: str, capped: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *(("-c", UNDER_1_GIB) if capped else ("-m", "arena.cli")), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_token_file_that_is_a_fifo_no_one_writes_to(tmp_path: Path) -> None:
    """Opening a FIFO waits for a writer, for ever: the command hung before it said anything."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    seats = ("--seat", "builtin:random") * 3
    done = ohell("challenge", "--address", "127.0.0.1:1", "--token-file", str(fifo), *seats)
    one_line(done, f"--token-file {fifo} is empty")


@pytest.mark.parametrize(
    "args",
    [
        ("challenge", "--address", "127.0.0.1:1", "--token-file", "/dev/zero", *("--seat", "builtin:random") * 3),
        ("engine", "--address", "127.0.0.1:0", "--agents-file", "/dev/zero"),
        ("tournament", "list", "--matchmaker", "127.0.0.1:1", "--host-token-file", "/dev/zero"),
    ],
)
def test_a_token_file_that_never_ends(args: tuple[str, ...]) -> None:
    """/dev/zero (or a disk image given by mistake) was read whole into memory: a MemoryError traceback
    under the cap, the machine's memory without it."""
    one_line(ohell(*args, capped=True), "/dev/zero", "over 1048576 bytes")


@pytest.mark.parametrize("text", ["line-one-0123\nline-two-0123\n", "t\u00f6ken-secret-0123\n", "tab\tin-it-0123"])
def test_a_token_file_of_more_than_one_token(tmp_path: Path, text: str) -> None:
    """Two lines (the agents file given as --token-file, a .env), or a letter outside ASCII: gRPC
    refused the call with "INTERNAL: Invalid metadata" and a C++ log, naming no file."""
    path = tmp_path / "token"
    path.write_text(text)
    for args in (
        ("challenge", "--address", "127.0.0.1:1", "--token-file", str(path), *("--seat", "builtin:random") * 3),
        ("tournament", "list", "--matchmaker", "127.0.0.1:1", "--host-token-file", str(path)),
    ):
        done = ohell(*args)
        one_line(done, str(path), "more than one line of printable ASCII")
        assert "0123" not in done.stderr
