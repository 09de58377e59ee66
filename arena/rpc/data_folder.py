"""``ohell up``'s data folder as the ``ohell`` commands run beside it find it, and the addresses they
dial by default: the unix sockets its engine service and matchmaker listen on there.

A TCP port on 127.0.0.1 is every local user's: while the stack is down another may listen on it and
take the token a command sends (the host's or an agent's). So a command given no address dials the
stack's socket when its file is there, and a socket nothing answers on is a stack that is down: the
command says so and does not try TCP. Nor does it dial a socket in a folder another user owns or may
write in. Without gRPC, which the commands load only when they connect.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

from arena.rpc.settings import ConfigError

DATA_DIR_ENV = "OHELL_DATA_DIR"
ENGINE_SOCKET = "engine.sock"  # the engine service's: the bot commands' way to ohell up's gateway
MATCHMAKER_SOCKET = "matchmaker.sock"  # the matchmaker's: the host commands' and the bot commands'
UP_ARCHIVE = "archive.db"  # ohell up's SQLite match archive (unless it was given a database URL)
ENGINE_ADDRESS = "127.0.0.1:50051"  # ohell up's TCP addresses, by default
MATCHMAKER_ADDRESS = "127.0.0.1:50052"


def default_data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "ohell-arena")


def data_folder_file(name: str, folder: Path | None = None) -> Path:
    """The file ``name`` in ``ohell up``'s data folder as a command run beside it finds it: ``folder``
    (the commands resolve ``ohell.toml``'s ``data_dir`` too: arena.local.config.stack_folder), else
    ``$OHELL_DATA_DIR``, else the default folder."""
    return (folder or Path(os.environ.get(DATA_DIR_ENV) or default_data_dir()).expanduser()) / name


def up_archive(folder: Path) -> tuple[str, str]:
    """``sqlite:///PATH`` of ``ohell up``'s archive in its data folder ``folder`` and "", or "" and why
    not: that file is not there, or another user may have put it there (``not_ours``: its matches would
    be read as the host's)."""
    path = (folder / UP_ARCHIVE).absolute()
    try:
        there = path.is_file()
    except OSError:  # a data folder this user may not enter (Path.is_file raises EACCES)
        there = False
    why = not_ours(path.parent) if there else ""
    if not there or why:
        return "", f"ohell up's archive {path} {f'not read: {why}' if why else 'is not there'}"
    return f"sqlite:///{path}", ""


def not_ours(folder: Path) -> str:
    """Why a file in ``folder`` may have been put there by another user ("" when it cannot): the
    folder, or the link that names it (they may point it elsewhere), is another user's, or others
    may write in it. The commands then neither dial its socket nor read its host-token."""
    try:
        named, folder_info = os.lstat(folder), os.stat(folder)
    except OSError as error:
        return f"{folder}: {error.strerror}"
    if os.getuid() != named.st_uid or os.getuid() != folder_info.st_uid:
        return f"{folder} is another user's"
    if folder_info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others may write in {folder}"
    return ""


def stack_address(name: str, tcp: str, *, who: str, sent: str, flag: str, folder: Path | None = None) -> str:
    """``unix:PATH`` of the socket ``name`` in the data folder (``data_folder_file``) when its file is
    there (also a closed one: the stack is down), else ``tcp``. ConfigError for a socket another user
    may have put there (``who`` do not dial it: ``sent`` would go to what listens on it; ``flag`` gives
    an address)."""
    path = data_folder_file(name, folder)
    try:
        info = os.lstat(path)
    except OSError:  # none there, or a folder this user may not enter (another user's)
        return tcp
    why = not_ours(path.parent)
    if not why and (not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid()):
        why = f"{path} is another user's" if stat.S_ISSOCK(info.st_mode) else f"{path} is no socket"
    if why:
        raise ConfigError(
            f"{why}: {who} do not dial the socket there ({sent} goes to what listens on it);"
            f" give {flag} ADDRESS, or make the data folder your own"
        )
    return f"unix:{path.absolute()}"


def nothing_listens(address: str) -> bool:
    """``address`` is ``unix:PATH`` of a socket that refuses connections: its server is down."""
    path = address.removeprefix("unix:")
    if path == address:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            return True
        except OSError:  # gRPC's own error says it better
            return False
    return False
