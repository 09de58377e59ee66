"""A server's unix socket: a second address that only those who may enter its folder can reach (a
TCP port on 127.0.0.1 is every local user's, and anyone may listen there while the server is down).

Its file outlives the server: gRPC removes it on a clean stop, so ``leave_closed`` puts a closed one
back. A client that finds the file knows whose server it is and that it is down, and does not turn
to a TCP address someone else may hold. Without gRPC (the ``ohell`` commands check paths with it).
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
from pathlib import Path

from arena.rpc.settings import ConfigError

# sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs, the closing NUL included
MAX_PATH_BYTES = 107 if sys.platform.startswith("linux") else 103


def socket_path(path: str | Path) -> str:
    """``path`` made absolute; ConfigError when it is too long for a unix socket."""
    absolute = os.path.abspath(path)
    size = len(os.fsencode(absolute))
    if size > MAX_PATH_BYTES:
        raise ConfigError(
            f"unix socket {absolute}: the path is {size} bytes, over the {MAX_PATH_BYTES} a unix socket's may have"
        )
    return absolute


def clear_stale(path: str) -> None:
    """Remove the socket file at ``path`` that no process listens on (left by a killed server, or by
    ``leave_closed``); ConfigError when a process listens there or the file is no socket. gRPC would
    remove a live one too, and take over the callers of the server that had it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise ConfigError(f"unix socket {path}: a file that is no socket is there; remove it")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            try:
                os.unlink(path)
            except FileNotFoundError:  # removed meanwhile
                pass
            except OSError as error:  # another user's, in a folder with the sticky bit (/tmp)
                raise ConfigError(f"unix socket {path}: cannot remove the old one: {error.strerror}") from None
            return
        except OSError as error:
            if error.errno == errno.ENOENT:  # removed meanwhile
                return
            raise ConfigError(f"unix socket {path}: {error.strerror or error}") from None
    raise ConfigError(f"cannot listen on unix socket {path}: another process listens there")


def leave_closed(path: str) -> None:
    """A socket file at ``path`` that refuses every connection (none listens on it), unless a file is there."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as closed:
        try:
            closed.bind(path)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:  # EADDRINUSE: a file is there already
                raise
