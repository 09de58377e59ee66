"""Settings of ``ohell up``: fixed default addresses and a data folder, each settable by a flag, an
environment variable or a TOML config file (flags win over the environment, which wins over the file).

    # ohell.toml (read from --config, $OHELL_CONFIG, or ./ohell.toml when present)
    data_dir = "/srv/ohell"
    engine_address = "0.0.0.0:50051"
    web_address = "0.0.0.0:8080"
    workers = 2
    batch = 6
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.keys import new_token
from arena.ladder.routing import BATCH_ENV, DEFAULT_BATCH, MAX_BATCH
from arena.rpc.data_folder import DATA_DIR_ENV, ENGINE_ADDRESS, MATCHMAKER_ADDRESS, default_data_dir, up_archive
from arena.rpc.files import is_plain_file
from arena.rpc.settings import ConfigError, NotOwnFile, is_host_port, read_token
from arena.sdk.arguments import UpPlace
from ohell.errors import OhHellError

HOST_TOKEN_ENV = "OHELL_HOST_TOKEN"
CONFIG_ENV = "OHELL_CONFIG"


@dataclass(frozen=True)
class Setting:
    kind: type
    env: str
    default: Any
    help: str


SETTINGS: dict[str, Setting] = {
    "data_dir": Setting(str, DATA_DIR_ENV, None, "Redis data, the archive, logs and the host token"),
    "engine_address": Setting(str, "OHELL_ENGINE_ADDRESS", ENGINE_ADDRESS, "engine service (agents connect)"),
    "matchmaker_address": Setting(str, "OHELL_MATCHMAKER_ADDRESS", MATCHMAKER_ADDRESS, "matchmaker service"),
    "web_address": Setting(str, "OHELL_WEB_ADDRESS", "127.0.0.1:8080", "the web app"),
    "redis_url": Setting(str, "REDIS_URL", "", "use this Redis instead of the embedded one"),
    "database_url": Setting(str, "OHELL_DATABASE_URL", "", "the match archive (default: SQLite in the data folder)"),
    "redis_port": Setting(int, "OHELL_REDIS_PORT", 6390, "port of the embedded Redis"),
    "workers": Setting(int, "OHELL_WORKERS", 1, "worker processes for built-in matches"),
    "concurrency": Setting(int, "OHELL_CONCURRENCY", os.cpu_count() or 2, "pool size of each worker"),
    "remote_concurrency": Setting(int, "OHELL_REMOTE_CONCURRENCY", 16, "threads for matches with remote agents"),
    "batch": Setting(
        int,
        BATCH_ENV,
        DEFAULT_BATCH,
        f"all-built-in matches per worker task, 1 to {MAX_BATCH} (the matchmaker's --batch)",
    ),
    "metrics": Setting(bool, "OHELL_METRICS", False, "serve /metrics from every process"),
    "host_token_file": Setting(str, "OHELL_HOST_TOKEN_FILE", "", "the host credential (default: in the data folder)"),
}


def _convert(name: str, value: Any, where: str) -> Any:
    kind = SETTINGS[name].kind
    if kind is bool and isinstance(value, str):
        if value.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
            raise OhHellError(f"{where}: {name} must be true or false, got {value!r}")
        return value.lower() in ("1", "true", "yes", "on")
    if kind is int and isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise OhHellError(f"{where}: {name} must be a whole number, got {value!r}") from None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {int: "a whole number", str: "a string", bool: "true or false"}[kind]
        raise OhHellError(f"{where}: {name} must be {expected}, got {value!r}")
    return value


class NotOwnConfig(OhHellError):
    """A config file read ``own`` is a link, a second name of a file or another user's."""


def read_config_file(path: Path, own: bool = False) -> dict[str, Any]:
    """The settings of the TOML file ``path``. ``own``: NotOwnConfig unless the file opened, not through
    a link, is a plain file of this user's with no other name (checked on the one read)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_NOFOLLOW | os.O_NONBLOCK if own else 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as file:
            if own and not is_plain_file(os.fstat(file.fileno()), os.getuid()):
                raise OSError(errno.EPERM, "not a file of yours alone")
            data = tomllib.loads(file.read().decode("utf-8"))
    except OSError as error:
        if own and error.errno in (errno.ELOOP, errno.EPERM):
            raise NotOwnConfig(f"config file {path}: not a file of yours alone") from None
        raise OhHellError(f"config file {path}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise OhHellError(f"config file {path}: {error}") from None
    unknown = sorted(set(data) - set(SETTINGS))
    if unknown:
        raise OhHellError(f"config file {path}: unknown setting {unknown[0]!r}; known: {', '.join(SETTINGS)}")
    return {name: _convert(name, value, f"config file {path}") for name, value in data.items()}


def check_address(name: str, address: str, source: str = "") -> None:
    """``source``: where the value came from, said after the refusal (``from $OHELL_WEB_ADDRESS``)."""
    if not is_host_port(address):
        raise OhHellError(f"{name} must be HOST:PORT with a port from 0 to 65535, got {address!r}{source}")


def config_settings(config_path: str | None, environ: Mapping[str, str]) -> tuple[dict[str, Any], str | None]:
    """The config file's settings and its name: ``config_path`` (--config), else $OHELL_CONFIG, else
    ./ohell.toml when present (none: ``({}, None)``). One named by neither is read only from a plain
    file of the user's alone: in a folder others may write in (``/tmp``), another user could have put
    it there, to point the archive or the host token file at theirs."""
    named = config_path or environ.get(CONFIG_ENV)
    if named:
        return read_config_file(Path(named)), named
    found = Path("ohell.toml")
    if not (found.is_file() or found.is_symlink()):
        return {}, None
    try:
        return read_config_file(found, own=True), str(found)
    except NotOwnConfig as error:  # another fault of the file is the same whoever names it
        raise OhHellError(
            f"{error}: not read; name it with ${CONFIG_ENV} (or ohell up's --config) to read it"
        ) from None


def pick(
    name: str, flags: Mapping[str, Any], environ: Mapping[str, str], from_file: Mapping[str, Any], path: str | None
) -> tuple[Any, str]:
    """One setting from ``flags`` (None = not given), else ``environ``, else the config file ``path``
    (read into ``from_file``), else its default; and where it came from ("" for the default)."""
    setting = SETTINGS[name]
    if flags.get(name) is not None:
        return flags[name], f"--{name.replace('_', '-')}"
    if environ.get(setting.env):
        return _convert(name, environ[setting.env], f"${setting.env}"), f"${setting.env}"
    if name in from_file:
        return from_file[name], f"{name} in the config file {path}"
    return setting.default, ""


def resolve(flags: Mapping[str, Any], environ: Mapping[str, str], config_path: str | None = None) -> dict[str, Any]:
    """Every setting: from ``flags`` (None = not given), else ``environ``, else the config file, else the default."""
    from_file, path = config_settings(config_path, environ)
    settings = {}
    source = {}  # where each value came from, as a refusal of it says: " (from $OHELL_WORKERS)"
    for name in SETTINGS:
        settings[name], where = pick(name, flags, environ, from_file, path)
        source[name] = f" (from {where})" if where else ""
    settings["data_dir"] = str(Path(settings["data_dir"] or default_data_dir()).expanduser())
    for name in ("engine_address", "matchmaker_address", "web_address"):
        check_address(name.replace("_", "-"), settings[name], source[name])
    for name in ("workers", "concurrency", "remote_concurrency"):
        if settings[name] < 1:
            raise OhHellError(f"{name.replace('_', '-')} must be at least 1, got {settings[name]}{source[name]}")
    if not 1 <= settings["batch"] <= MAX_BATCH:
        raise OhHellError(f"batch must be from 1 to {MAX_BATCH}, got {settings['batch']}{source['batch']}")
    if not 0 <= settings["redis_port"] <= 65535:
        raise OhHellError(f"redis-port must be from 0 to 65535, got {settings['redis_port']}{source['redis_port']}")
    return settings


@dataclass(frozen=True)
class StackArchive:
    """The archive ``ohell up`` writes, as a command run beside it finds it."""

    url: str  # "" for the data folder's archive.db when that is not there or not read (``problem`` says which)
    source: str  # where the URL came from, as said after it
    problem: str = ""


def stack_folder(environ: Mapping[str, str]) -> tuple[Path, str]:
    """``ohell up``'s data folder as a command run beside it finds it, and where it came from ("" for the
    default): $OHELL_DATA_DIR, else data_dir in the config file ($OHELL_CONFIG, else ./ohell.toml),
    else the default. OhHellError for a config file ``ohell up`` would refuse too."""
    from_file, path = config_settings(None, environ)
    data_dir, where = pick("data_dir", {}, environ, from_file, path)
    return Path(data_dir or default_data_dir()).expanduser(), where


def stack_setting(name: str, environ: Mapping[str, str]) -> Any:
    """The setting ``name`` as ``ohell up`` run beside the command took it (no flags): the environment,
    else the config file, else its default."""
    from_file, path = config_settings(None, environ)
    return pick(name, {}, environ, from_file, path)[0]


def up_place() -> UpPlace:
    """Where the bot commands find ``ohell up`` when given no address, as the host commands do:
    its data folder (for the sockets) and its TCP addresses, from the environment, else the config
    file, else the defaults."""
    return UpPlace(
        stack_folder(os.environ)[0],
        stack_setting("engine_address", os.environ),
        stack_setting("matchmaker_address", os.environ),
    )


def stack_archive(environ: Mapping[str, str], database_url: str | None = None) -> StackArchive:
    """The archive of ``ohell up`` with the same settings: ``database_url`` (a command's flag), else
    $OHELL_DATABASE_URL, else database_url in the config file, else archive.db in its data folder
    ($OHELL_DATA_DIR, else data_dir in the config file, else the default). OhHellError for a config
    file ``ohell up`` would refuse too."""
    from_file, path = config_settings(None, environ)
    url, where = pick("database_url", {"database_url": database_url}, environ, from_file, path)
    if url:
        return StackArchive(url, f"from {where}")
    folder, where = stack_folder(environ)
    url, problem = up_archive(folder)
    return StackArchive(url, "ohell up's, in its data folder" + (f" from {where}" if where else ""), problem)


def refused(path: Path, error: OSError) -> OhHellError:
    """``path`` (the data folder or one of its files) refused by the system, said in one line with what to
    do about ``error``'s kind: a read-only file system or a folder this user may not enter is not mended
    by removing anything."""
    if error.errno == errno.EROFS:
        advice = "give a --data-dir on a file system ohell up can write to"
    elif error.errno in (errno.EACCES, errno.EPERM):
        advice = "not yours to use (another user's, or in a folder you may not enter): give a --data-dir of your own"
    else:
        advice = "give another --data-dir"
    return OhHellError(f"{path}: {error.strerror or error}: {advice}")


def stands_at(path: Path) -> bool:
    """Whether anything (a link too) stands at ``path`` in the data folder: OhHellError (``refused``)
    where the system will not say (a folder on the way this user may not enter), not a traceback."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as error:
        raise refused(path, error) from None
    return True


def refuse_shared(folder: Path) -> None:
    """OhHellError for a data folder every user may write in (``/tmp``): it is never made 700, as
    root could, nor given the host token."""
    try:
        mode = folder.stat().st_mode
    except OSError as error:
        raise refused(folder, error) from None
    if mode & stat.S_IWOTH:
        raise OhHellError(f"data folder {folder}: every user may write in it (a shared folder): give one of your own")


def make_data_folder(folder: Path) -> None:
    """``ohell up``'s data folder, made this user's alone when missing: OhHellError for a path that is
    no folder (a file, a folder under a file), one that cannot be made, or a folder every user may write in."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:  # mkdir's exist_ok covers a folder only
        raise OhHellError(f"data folder {folder} is a file: give a folder (made when missing)") from None
    except OSError as error:
        raise OhHellError(f"data folder {folder}: {error.strerror or error}") from None
    claim_folder(folder)


def claim_folder(folder: Path) -> None:
    """``folder`` made this user's alone (700): OhHellError for one others may write in (``/tmp``: it
    is not made 700, as root would) or one this user cannot make its own (another user's)."""
    refuse_shared(folder)
    try:
        folder.chmod(0o700)
    except PermissionError:
        raise OhHellError(f"data folder {folder} is another user's: give one of your own") from None
    except OSError as error:  # a read-only file system (EROFS)
        raise refused(folder, error) from None


def host_token(settings: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str]:
    """(token, where it comes from): $OHELL_HOST_TOKEN, the host token file, or a new one written
    (mode 600) to the data folder's ``host-token`` and kept there across restarts."""
    if environ.get(HOST_TOKEN_ENV):
        return environ[HOST_TOKEN_ENV].strip(), f"${HOST_TOKEN_ENV}"
    path = Path(settings["host_token_file"] or Path(settings["data_dir"]) / "host-token")
    there = not settings["host_token_file"] and stands_at(path)  # first: it says a folder it may not enter
    if not settings["host_token_file"] and path.parent.is_dir():  # not read where anyone may have put it
        refuse_shared(path.parent)  # (a FIFO another user holds open and never writes kept ohell up waiting)
    if settings["host_token_file"] or there:
        # the data folder's is read only from a plain file of the user's alone: in a folder a group or another
        # user may write in, a FIFO held open (ohell up waited for ever), a link or another user's file could
        # stand there instead of the host token
        try:
            return read_token(path, "host token file", own=not settings["host_token_file"]), str(path)
        except NotOwnFile as error:
            raise OhHellError(f"{error}: remove it (ohell up then makes a new host token)") from None
        except ConfigError as error:
            raise OhHellError(str(error)) from None
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new data folder: the user's alone
    refuse_shared(path.parent)  # before the token goes there, not after (the stack checks it again)
    token = new_token(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(token + "\n")
    return token, str(path)
