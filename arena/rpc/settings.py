"""What a process reads at start-up and may find unusable (a token file), and how it shows a URL it
was given. Without gRPC, so that the ``ohell`` commands that never connect do not load it."""

from __future__ import annotations

import errno
import ipaddress
import os
from pathlib import Path

from arena.rpc.files import is_plain_file
from arena.shown_urls import shown_url

__all__ = ["shown_url"]  # the commands import it from here, beside the other start-up settings


class ConfigError(ValueError):
    """A setting a process starts with (a token, its file, a rate limit) is unusable: the process
    says which in one line and stops."""


class NotOwnFile(ConfigError):
    """A token file read ``own`` is a link, a FIFO, a device, a second name of a file or another user's."""


# an agents file of thousands of lines fits; /dev/zero, a log or a disk image given by mistake does not
MAX_TOKEN_FILE_BYTES = 1 << 20


def read_token_file(path: str | Path, label: str = "--host-token-file", lines: bool = False, own: bool = False) -> str:
    """The token a file holds (its text, stripped); ConfigError "``label`` ``path``: why" when the
    file cannot be read, is not text or is over MAX_TOKEN_FILE_BYTES. A FIFO no process writes to
    reads as empty rather than waiting for a writer for ever (a pipe with one, as ``<(command)``
    gives, is read to its end). Unless ``lines``, the text must be one line of printable ASCII: gRPC
    refused a token with more ("INTERNAL: Invalid metadata", naming no file). Errors never quote the file.
    ``own``: NotOwnFile unless the file opened, not through a link, is a plain file of this user's with no
    other name (checked on the one read: a name checked, then opened, may have been replaced between)."""
    not_own = NotOwnFile(f"{path} is not a file of yours alone")
    try:
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if own else 0)
        try:
            descriptor = os.open(path, flags)  # opening a FIFO waits for a writer without O_NONBLOCK
        except OSError as error:
            if own and error.errno == errno.ELOOP:
                raise not_own from None
            raise
        with os.fdopen(descriptor, "rb") as file:
            if own and not is_plain_file(os.fstat(descriptor), os.getuid()):
                raise not_own
            os.set_blocking(descriptor, True)  # a FIFO's writer may not have written yet: wait for it
            data = file.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{label} {path}: {error.strerror or error}") from None
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise ConfigError(f"{label} {path}: over {MAX_TOKEN_FILE_BYTES} bytes (it should hold the token as text)")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{label} {path}: not a text file (it should hold the token as text)") from None
    if not lines:
        check_one_line(text, label, path)
    return text


def check_one_line(text: str, label: str, path: str | Path) -> None:
    """ConfigError unless ``text`` (a token file's) is one line of printable ASCII, as a token is."""
    if not (text.isascii() and text.isprintable()):
        raise ConfigError(
            f"{label} {path}: holds more than one line of printable ASCII (it should hold the token alone)"
        )


def read_token(path: str | Path, label: str, own: bool = False) -> str:
    """``read_token_file``, and a ConfigError "``label`` ``path`` is empty" for a file with no token:
    a command that needs one would send none and be refused without a word of the file."""
    token = read_token_file(path, label, own=own)
    if not token:
        raise ConfigError(f"{label} {path} is empty")
    return token


def is_host_port(address: str) -> bool:
    """``address`` is HOST:PORT with a port from 0 to 65535 (ASCII digits: "²" is a digit to
    ``str.isdigit`` but not to ``int``)."""
    host, sep, port = address.rpartition(":")
    return bool(sep and host and port.isascii() and port.isdigit() and int(port) <= 65535)


def is_loopback(address: str) -> bool:
    """HOST:PORT ``address`` listens on this machine only (127.0.0.0/8, ::1, localhost): not 0.0.0.0,
    ::, a name or an address of a network interface, which other machines may dial."""
    host = address.rpartition(":")[0].removeprefix("[").removesuffix("]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: whatever it resolves to, others may reach it
        return False
