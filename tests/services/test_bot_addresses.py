"""The bot commands' addresses: a URL typed where HOST:PORT belongs is refused at once; given none,
they find ``ohell up``'s as the host commands do (its environment, else ./ohell.toml)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import build_parser
from arena.local import bot_cli
from arena.sdk.arguments import address_or_stack
from ohell.errors import OhHellError


@pytest.mark.parametrize("given", ["http://127.0.0.1:50051", "HTTPS://arena.example:443", "grpc://h:1"])
def test_a_url_is_refused_naming_the_flag(given: str) -> None:
    with pytest.raises(OhHellError, match=r"--engine .*give HOST:PORT or unix:PATH, without \w+://"):
        address_or_stack(given, "engine.sock", "127.0.0.1:50051", "--engine")


@pytest.mark.parametrize("given", ["127.0.0.1:50051", "unix:/tmp/x.sock", "dns:///arena.example:50051", "[::1]:7"])
def test_host_port_and_grpc_targets_pass_as_given(given: str) -> None:
    assert address_or_stack(given, "engine.sock", "127.0.0.1:50051", "--engine") == given


@pytest.fixture
def beside_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working folder whose ./ohell.toml puts ``ohell up``'s data folder (yielded) and addresses
    elsewhere than the defaults, nothing of them in the environment; the matchmaker's socket
    listening in that folder, the engine's not there."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    config = tmp_path / "ohell.toml"
    config.write_text(
        f'data_dir = "{data}"\nengine_address = "127.0.0.1:7051"\nmatchmaker_address = "127.0.0.1:7052"\n'
    )
    config.chmod(0o600)
    for name in ("OHELL_DATA_DIR", "OHELL_CONFIG", "OHELL_ENGINE_ADDRESS", "OHELL_MATCHMAKER_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the default data folder: empty
    monkeypatch.chdir(tmp_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
        listening.bind(str(data / "matchmaker.sock"))
        listening.listen()
        yield data


def test_the_bot_commands_find_the_stack_where_ohell_toml_puts_it(beside_up: Path) -> None:
    """They looked in the default data folder, and dialled the default ports, where the host commands
    run in the same folder found ``ohell up``'s socket in the data folder ./ohell.toml names."""
    assert bot_cli.MATCHMAKER.address(None, "--matchmaker") == f"unix:{beside_up / 'matchmaker.sock'}"
    assert bot_cli.ENGINE.address(None, "--engine") == "127.0.0.1:7051"  # no socket: ohell.toml's address
    parser = build_parser()
    for argv in (["challenge", "--seat", "builtin:random"], ["bot", "connect"]):  # ohell's, not the SDK's alone
        assert parser.parse_args(argv).engine.address(None, "--address") == "127.0.0.1:7051"
    assert bot_cli.ENGINE.address("127.0.0.1:9", "--engine") == "127.0.0.1:9"  # a flag wins


def test_the_environment_names_the_address_when_there_is_no_socket(
    beside_up: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``ohell up`` takes it over ohell.toml; the socket still comes first (the token stays off TCP)."""
    monkeypatch.setenv("OHELL_ENGINE_ADDRESS", "127.0.0.1:8051")
    monkeypatch.setenv("OHELL_MATCHMAKER_ADDRESS", "127.0.0.1:8052")
    assert bot_cli.ENGINE.address(None, "--engine") == "127.0.0.1:8051"
    assert bot_cli.MATCHMAKER.address(None, "--matchmaker") == f"unix:{beside_up / 'matchmaker.sock'}"
