"""``ohell up``, ``ohell demo`` and ``ohell ladder``: run the stack, the demo ladder, ratings tools."""

from __future__ import annotations

import argparse
import errno
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from arena.keys import DEFAULT_PREFIX, PREFIX_ENV, Keys
from arena.ladder.processes import process_exists
from arena.local import admin
from arena.local.config import (
    CONFIG_ENV,
    HOST_TOKEN_ENV,
    SETTINGS,
    config_settings,
    host_token,
    make_data_folder,
    refused,
    resolve,
    stack_archive,
    stack_folder,
)
from arena.rpc.data_folder import UP_ARCHIVE, data_folder_file, default_data_dir, not_ours
from arena.rpc.files import is_plain_file
from arena.rpc.settings import ConfigError, read_token_file, shown_url
from ohell.errors import OhHellError

if TYPE_CHECKING:  # the stack (SQLAlchemy, Alembic, ...) is loaded by the commands that run it
    from arena.local.stack import StackConfig


def up_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``ohell up``'s settings from flags, environment and config file."""
    return resolve({name: getattr(args, name, None) for name in SETTINGS}, os.environ, args.config)


def up_config(
    args: argparse.Namespace, settings: dict[str, Any] | None = None
) -> tuple[StackConfig, dict[str, Any], str]:
    """The stack of ``ohell up`` from its ``settings`` (else ``up_settings``), the host token read
    or made in the data folder; also the settings and where the host token comes from."""
    from arena.local.stack import StackConfig

    settings = settings or up_settings(args)
    token, token_source = host_token(settings, os.environ)
    data_dir = settings["data_dir"]
    env = {HOST_TOKEN_ENV: token}
    config = StackConfig(
        redis_url=settings["redis_url"] or None,
        redis_port=settings["redis_port"] or None,
        # the match archive lives in the data folder too unless a URL is set
        database_url=settings["database_url"] or f"sqlite:///{Path(data_dir) / UP_ARCHIVE}",
        host_token=token,
        save_host_token=False,  # host_token() made the data folder's file if it was the token's source
        builtin_workers=settings["workers"],
        concurrency=settings["concurrency"],
        remote_concurrency=settings["remote_concurrency"],
        batch=settings["batch"],
        metrics=settings["metrics"],
        log_dir=data_dir,
        engine_address=settings["engine_address"],
        matchmaker_address=settings["matchmaker_address"],
        web_address=settings["web_address"],
        env=env,
    )
    return config, settings, token_source


def hold_data_folder(folder: Path) -> int:
    """Lock ``folder`` for this ``ohell up`` (the descriptor returned holds it until the process
    ends): two stacks on one data folder would share its Redis files, archive and sockets, each
    replacing the other's. OhHellError naming the pid of the one that holds it, or the lock file
    when it is not one ``ohell up`` made (a FIFO, a folder, a link, another user's file, a second
    name of another file, which writing the pid would have emptied)."""
    import fcntl

    path = folder / "up.lock"
    remove = "remove it (only ohell up's lock file, which it makes again, belongs there)"
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        lock = os.open(path, flags, 0o600)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):  # a link, a folder, a socket
            raise OhHellError(f"{path}: {error.strerror}: {remove}") from None
        if error.errno == errno.EACCES and os.path.lexists(path):  # a file of another user, or one not writable
            raise OhHellError(f"{path}: {error.strerror}: not a file of yours to write: {remove}") from None
        raise refused(path, error) from None  # a read-only file system: removing nothing mends it
    info = os.fstat(lock)
    if not is_plain_file(info, os.getuid()):
        os.close(lock)
        raise OhHellError(f"{path} is not a file of yours alone: {remove}")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if not isinstance(error, BlockingIOError):  # a file system with no locks (some network ones)
            os.close(lock)
            raise OhHellError(
                f"{path}: cannot be locked ({error.strerror}): give a --data-dir on a local file system"
            ) from None
        text = os.read(lock, 32).decode(errors="replace").strip()
        holder = text if text.isascii() and text.isdigit() else "?"  # a pid, never the file's other text
        os.close(lock)
        running, stop = f"another `ohell up` (pid {holder}) is running", "it"
        if holder != "?" and not process_exists(int(holder)):  # its processes hold the lock after it (SIGKILL)
            running = f"processes of an `ohell up` that ended (pid {holder}: its Redis, services, workers) still run"
            stop = "them"
        raise OhHellError(
            f"{running} on the data folder {folder}: stop {stop}, or give this one a --data-dir of its own"
        ) from None
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    return lock


def cmd_up(args: argparse.Namespace) -> int:
    from arena.embedded_redis import PortTaken
    from arena.local.stack import Stack, stop_on_signals

    settings = up_settings(args)
    make_data_folder(Path(settings["data_dir"]))
    # held before anything in the folder is read or made: a refused second ohell up left a new host-token
    # there, which the running stack does not take (the host commands then sent it and were refused)
    lock = hold_data_folder(Path(settings["data_dir"]))
    config, settings, token_source = up_config(args, settings)
    stack = Stack(config)  # makes the data folder's files this user's alone
    stack.pass_fds = (lock,)  # its processes hold the lock too
    stop_on_signals()
    try:
        stack.start()
        print(f"web         {stack.web_url}   (leaderboards, replays, live matches; host pages)")
        print(f"engine      {stack.engine_address}   (agents connect here)")
        print(f"matchmaker  {stack.matchmaker_address}   (ohell ladder/agent/leaderboard/matches)")
        for service, path, users in (
            ("engine", stack.engine_socket, "the bot commands"),
            ("matchmaker", stack.matchmaker_socket, "the host and bot commands"),
        ):
            if path:
                print(f"socket      unix:{path}   (the {service}'s for {users}, yours alone)")
            else:
                print(f"socket      none: {stack.no_socket_why[service]}; {users} go over TCP (a shorter --data-dir)")
        embedded = f"  (embedded, AOF on; with its password in {stack.redis_url_path})" if stack.redis else ""
        print(f"redis       {shown_url(stack.redis_url)}{embedded}")
        print(f"archive     {shown_url(stack.database_url)}")
        workers = f"{config.builtin_workers} x {config.concurrency} built-in + 1 x {config.remote_concurrency} remote"
        workers += f", built-in matches in batches of up to {config.batch}"
        print(f"workers     {workers}")
        for name, port in sorted(stack.metrics_ports.items()):
            print(f"metrics     {name}: http://127.0.0.1:{port}/metrics")
        print(f"host token  {token_source}   (web sign-in: {stack.web_url}/host; the host commands read it)")
        print(f"data        {settings['data_dir']}   (Redis data, archive, logs: kept across restarts)")
        config_file = config_settings(args.config, os.environ)[1]  # read (and checked) by up_settings already
        if config_file:
            print(f"config      {Path(config_file).absolute()}   (the settings no flag or environment variable gives)")
        else:
            print(f"config      none   (no --config, ${CONFIG_ENV} or ./ohell.toml: flags, environment, defaults)")
        print("Ctrl-C stops everything.", flush=True)
        said = 0  # of stack.worker_ends
        while True:
            ended = stack.ended_services()
            for line in stack.worker_ends[said:]:  # also those of the last turn, before the stopping line
                print(line, flush=True)
                said += 1
            if ended:
                break
            time.sleep(0.5)
        print(f"stopping: {'; '.join(ended)} (logs in {stack.log_dir})", flush=True)
        return 1
    except KeyboardInterrupt:
        print("stopping every process of the stack (a few seconds)", flush=True)
        return 0
    except PortTaken as error:
        raise OhHellError(f"the embedded Redis: {error}; is another `ohell up` running? (--redis-port)") from None
    except RuntimeError as error:  # a process did not get ready: its log's tail says why (a port in use, ...)
        raise OhHellError(str(error)) from None
    finally:
        stack.cleanup()


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.local.demo import run_demo

    return run_demo(args)


def cmd_rebuild(args: argparse.Namespace) -> int:
    import redis
    from sqlalchemy.exc import SQLAlchemyError

    if args.name and args.ladder and args.name != args.ladder:
        raise OhHellError(f"two ladders named: {args.name!r} and --ladder {args.ladder!r}: give one")
    args.ladder = args.ladder or args.name  # `ohell ladder rebuild NAME`, as `ladder show NAME` takes it
    url = args.redis_url or os.environ.get("REDIS_URL") or up_redis_url()
    archive = archive_url(args) if args.source == "archive" else None
    try:
        return _rebuild(args, url, archive)
    except redis.AuthenticationError:
        why = "refused the URL's password" if urlsplit(url).password else "asks for a password the URL does not give"
        raise OhHellError(
            f"Redis at {shown_url(url)} {why} (redis://:PASSWORD@HOST:PORT/0; "
            "ohell up keeps the URL of its own in the data folder's file redis-url)"
        ) from None
    except (redis.ConnectionError, redis.TimeoutError) as error:
        raise OhHellError(f"cannot reach Redis at {shown_url(url)}: {error}") from None
    except (SQLAlchemyError, OSError) as error:  # an archive URL it cannot use, a database it cannot open
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        database, source = archive or ("", "from --database-url")
        flag = source.removeprefix("from ")
        said = flag if flag.startswith(("-", "$")) else "the archive"  # the flag or variable that gave it
        whence = "" if said == flag else f" ({source})"  # ohell.toml's, the data folder's
        raise OhHellError(f"{said} {shown_url(database)}: {first}{whence}") from None


def up_redis_url() -> str:
    """The URL ``ohell up`` keeps of its embedded Redis in its data folder (the password in it stays
    off the command line, which ``ps`` shows to every user of the machine)."""
    path = data_folder_file("redis-url", stack_folder(os.environ)[0])
    if os.path.exists(path) and (why := not_ours(path.parent)):  # another user's Redis would get the ratings
        raise OhHellError(f"give --redis-url or set REDIS_URL (ohell up's Redis URL file {path} not read: {why})")
    try:
        url = read_token_file(path, "ohell up's Redis URL file")
    except ConfigError as error:
        raise OhHellError(f"give --redis-url or set REDIS_URL ({error})") from None
    if not url:
        raise OhHellError(f"give --redis-url or set REDIS_URL (ohell up's Redis URL file {path} is empty)")
    return url


def archive_url(args: argparse.Namespace) -> tuple[str, str]:
    """The archive ``ohell ladder rebuild --from archive`` reads, and where its URL came from: the one
    ``ohell up`` writes with the same settings (``stack_archive``: --database-url first)."""
    from arena.archive.db import DATABASE_URL_ENV

    archive = stack_archive(os.environ, args.database_url)
    if not archive.url:
        raise OhHellError(
            f"give --database-url, or set {DATABASE_URL_ENV} or database_url in ohell.toml ({archive.problem})"
        )
    return archive.url, archive.source


def _rebuild(args: argparse.Namespace, url: str, archive: tuple[str, str] | None) -> int:
    from arena.ladder.ratings import REBUILD_TRIES, RatedMeanwhile
    from arena.ladder.redis_store import RedisStore
    from arena.ladder.store import StoreError

    try:
        store = RedisStore.connect(url, Keys(args.prefix))
    except ValueError as error:  # not a Redis URL
        raise OhHellError(f"--redis-url {shown_url(url)}: {error}") from None
    ladders = [args.ladder] if args.ladder else [ladder.name for ladder in store.list_ladders()]
    engine = None
    if archive is not None:
        from arena.archive.db import connect

        database, source = archive
        print(f"archive: {shown_url(database)} ({source})")
        engine = connect(database)
    try:
        for name in ladders:
            try:
                store.get_ladder(name)
            except StoreError as error:
                raise OhHellError(str(error)) from None
            try:
                if engine is None:
                    print(f"{name}: ratings rebuilt from {store.rebuild_ratings(name)} logged matches")
                    continue
                from arena.archive.queries import in_log_order, summary

                archived = [(match.log_id, summary(match)) for match in in_log_order(engine, name)]
                replayed = store.rebuild_ratings(name, archived)
            except RatedMeanwhile:
                raise OhHellError(
                    f"ladder {name}: its matches were rated while its ratings were replayed ({REBUILD_TRIES} tries;"
                    f" nothing written): pause it (`ohell ladder pause {name}`), run the rebuild again once its"
                    f" matches in play have ended, then resume it"
                ) from None
            print(f"{name}: ratings rebuilt from {replayed} matches ({len(archived)} archived, the rest from the log)")
    finally:
        if engine is not None:
            engine.dispose()
        store.client.close()
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    up = sub.add_parser("up", help="run the whole ladder stack and the web app as local processes until Ctrl-C")
    up.add_argument("--config", help=f"a TOML file of these settings (default: ${CONFIG_ENV}, else ./ohell.toml)")
    for name, setting in SETTINGS.items():
        flag = "--" + name.replace("_", "-")
        default = default_data_dir() if name == "data_dir" else setting.default
        # an empty default means "not set": the help's text says what happens then
        text = (
            f"{setting.help} (${setting.env}; default {default})"
            if default != ""
            else f"{setting.help} (${setting.env})"
        )
        if setting.kind is bool:
            up.add_argument(flag, dest=name, action="store_true", default=None, help=text)
        else:
            up.add_argument(flag, dest=name, type=setting.kind, help=text)
    up.add_argument("--log-dir", dest="data_dir", help=argparse.SUPPRESS)  # the data folder's former name
    up.set_defaults(handler=cmd_up)

    demo = sub.add_parser("demo", help="the README's main job: a ladder of built-in bots on the local stack")
    demo.add_argument("--games", type=int, default=150, help="rated matches to play (default %(default)s)")
    demo.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules'; default %(default)s)")
    demo.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a rule (default for the demo: hand_sizes=[5,4,3,2,1])",
    )
    demo.add_argument("--seats", type=int, default=4, help="seats per table, 3..7 (default %(default)s)")
    demo.add_argument("--web-address", default="127.0.0.1:0", help="where the web app listens (port 0: any free)")
    demo.add_argument("--serve", action="store_true", help="keep serving the web app after the run, until Ctrl-C")
    demo.set_defaults(handler=cmd_demo)

    ladder = sub.add_parser(
        "ladder", help="create, update, list, show, pause, resume, delete, export ladders; rebuild ratings"
    )
    ladder_sub = ladder.add_subparsers(dest="ladder_command", required=True)
    rebuild = ladder_sub.add_parser("rebuild", help="recompute ratings and statistics from the match log")
    rebuild.add_argument(
        "--redis-url",
        help="the stack's Redis (default: $REDIS_URL, else ohell up's, from the file redis-url in its data folder: "
        "$OHELL_DATA_DIR, else data_dir in ohell.toml, else the default)",
    )
    rebuild.add_argument("name", nargs="?", help="one ladder, as the other ladder commands take it (or --ladder)")
    rebuild.add_argument("--ladder", help="one ladder (default: all)")
    rebuild.add_argument(
        "--prefix",
        default=Keys.from_env().prefix,
        help=f"Redis key prefix (default: ${PREFIX_ENV} or {DEFAULT_PREFIX!r})",
    )
    rebuild.add_argument(
        "--from",
        dest="source",
        choices=("log", "archive"),
        default="log",
        help="log: the Redis match log; archive: the SQL archive plus log entries it does not hold yet",
    )
    rebuild.add_argument(
        "--database-url",
        help="the archive (default: ohell up's, as its settings give it: $OHELL_DATABASE_URL, else database_url in"
        " ohell.toml, else archive.db in its data folder)",
    )
    rebuild.set_defaults(handler=cmd_rebuild)

    admin.register(
        sub, ladder_sub
    )  # ladder create|update|list|show|pause|resume|delete|export, agent, leaderboard, ...
