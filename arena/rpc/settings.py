"""What a process reads at start-up and may find unusable (a token file), and how it shows a URL it
was given. Without gRPC, so that the ``ohell`` commands that never connect do not load it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


class ConfigError(ValueError):
    """A setting a process starts with (a token, its file, a rate limit) is unusable: the process
    says which in one line and stops."""


def read_token_file(path: str | Path, label: str = "--host-token-file") -> str:
    """The token a file holds (its text, stripped); ConfigError "``label`` ``path``: why" when the
    file cannot be read or is not text."""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ConfigError(f"{label} {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{label} {path}: not a text file (it should hold the token as text)") from None


def is_host_port(address: str) -> bool:
    """``address`` is HOST:PORT with a port from 0 to 65535 (ASCII digits: "²" is a digit to
    ``str.isdigit`` but not to ``int``)."""
    host, sep, port = address.rpartition(":")
    return bool(sep and host and port.isascii() and port.isdigit() and int(port) <= 65535)


def shown_url(url: str) -> str:
    """``url`` with its password, if it has one, as ``***`` (what is printed may be logged)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}"))
