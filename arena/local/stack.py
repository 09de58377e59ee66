"""The whole ladder as local processes: Redis (embedded unless a URL is given), the engine
service, the matchmaker, Celery workers and the web app. Used by ``ohell up``, ``ohell demo`` and
the tests. Addresses are fixed by the config (``ohell up``'s defaults) or port 0 (the tests').

Every process is started in its own session, so a Ctrl-C in the terminal reaches only us and
``stop()`` ends each process group we started (a Celery worker and its pool children).
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.archive.db import DATABASE_URL_ENV, sqlite_url
from arena.embedded_redis import EmbeddedRedis, free_port
from arena.keys import DEFAULT_PREFIX, PREFIX_ENV
from arena.ladder.routing import Queues
from arena.local.config import claim_folder
from arena.rpc.auth import HOST_TOKEN_ENV, MIN_HOST_TOKEN, WEB_TOKEN_ENV, new_host_token
from arena.rpc.data_folder import ENGINE_SOCKET, MATCHMAKER_SOCKET
from arena.rpc.settings import ConfigError
from arena.rpc.unix_socket import socket_path
from ohell.errors import OhHellError

PORT_LINE = re.compile(r"service on port (\d+)")
WORKER_READY = re.compile(r"ohell worker ready")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals() -> None:
    """The first SIGINT or SIGTERM raises KeyboardInterrupt (also when started where SIGINT is
    ignored, ``cmd &``); later ones are ignored, so the stack's cleanup, which takes seconds, runs
    to its end (a second Ctrl-C ended ``ohell up`` in it and left Redis, the engine and the
    matchmaker running on their ports)."""

    def interrupt(*_: object) -> None:
        for stop_signal in STOP_SIGNALS:
            signal.signal(stop_signal, signal.SIG_IGN)
        raise KeyboardInterrupt

    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, interrupt)


def how_ended(returncode: int) -> str:
    """How a process ended, from its ``returncode``: "was killed by SIGKILL (signal 9)" (a signal,
    which Popen gives as a negative number) or "exited with status 1"."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:  # a real-time signal has no name
            return f"was killed by signal {-returncode}"
        return f"was killed by {name} (signal {-returncode})"
    return f"exited with status {returncode}"


def own_folder(folder: Path, archive: Path | None) -> None:
    """The stack's folder (``ohell up``'s data folder), its logs and the SQLite ``archive`` kept there,
    this user's alone: a folder of a version before 3 Dec 2026 kept archive.db and the logs readable by
    all (644). An archive not made yet is made so here, as SQLite would make it readable by all.
    OhHellError for a folder others may write in (``/tmp``: it is not made 700, as root would) or
    one this user cannot make its own (another user's)."""
    claim_folder(folder)
    files = list(folder.glob("*.log"))
    if archive is not None and archive.parent.resolve() == folder.resolve():
        os.close(os.open(archive, os.O_WRONLY | os.O_CREAT, 0o600))  # SQLite gives its -wal, -shm the same mode
        files += folder.glob(glob.escape(archive.name) + "*")  # those, -journal and the migrations' lock too
    for path in files:
        if path.is_file() and not path.is_symlink():
            path.chmod(0o600)


def write_secret(path: Path, secret: str) -> None:
    """``secret`` and a line break as the whole of ``path``, readable by this user alone: written to a
    new file that then replaces the name, so that a link or a FIFO found there (left by whoever could
    write in the folder before it was made 700) is replaced, not written through or waited on."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 600
    try:
        with os.fdopen(descriptor, "w") as out:
            out.write(secret + "\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


@dataclass
class StackConfig:
    redis_url: str | None = None  # None: start an embedded redis-server (AOF on)
    database_url: str | None = None  # the match archive; None: $OHELL_DATABASE_URL, else SQLite in log_dir
    prefix: str = DEFAULT_PREFIX  # every Redis key of this stack starts with it (arena.keys)
    builtin_workers: int = 1  # worker processes for built-in matches and ratings ...
    concurrency: int = 2  # ... each with this many prefork children
    remote_concurrency: int = 8  # threads of the one worker for matches with remote seats
    remote_worker: bool = True
    engine: bool = True
    metrics: bool = False  # serve /metrics from every process (ports in Stack.metrics_ports)
    env: dict[str, str] = field(default_factory=dict)  # extra environment (lease, visibility timeout)
    batch: int | None = None  # all-built-in matches per worker task (matchmaker --batch; None: its default)
    matchmaker_args: tuple[str, ...] = ()
    log_dir: str | None = None  # process logs (appended to) and the embedded Redis's data (redis/)
    engine_address: str = "127.0.0.1:0"  # port 0: any free port (read back from the process's log)
    matchmaker_address: str = "127.0.0.1:0"
    web_address: str | None = None  # None: no web app
    redis_port: int | None = None  # of the embedded redis-server (None: any free port)
    worker_log_level: str = "WARNING"  # INFO logs two lines per task
    host_token: str = ""  # the administration credential given to the services ("" = a new random one)
    # write host_token to <log_dir>/host-token (mode 600); ohell up keeps that file itself: made once, never
    # overwritten by a token given for one run ($OHELL_HOST_TOKEN, --host-token-file)
    save_host_token: bool = True


RESTART_STABLE_S = 30.0  # a worker that ran this long before it ended is started again at once
RESTART_FIRST_PAUSE_S = 1.0  # else the wait before its next start, doubled each time it ends so again
RESTART_MAX_PAUSE_S = 60.0


class Proc:
    def __init__(
        self, name: str, command: list[str], env: dict[str, str], log_path: Path, pass_fds: tuple[int, ...] = ()
    ) -> None:
        self.name = name
        self.pass_fds = pass_fds  # descriptors it keeps open (Stack.pass_fds)
        self.log_path = log_path
        self.command, self.env = command, env
        # closed in stop(); a new log is this user's alone (it may quote what the services were sent)
        self._log = os.fdopen(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        self.restart_pause_s = 0.0  # the supervisor's wait before starting it again (grows while it keeps ending)
        self.ended_at: float | None = None  # time.monotonic() when the supervisor found it ended
        self.popen = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        self._terminated = False  # this run was sent SIGTERM (terminate())
        self.started_at = time.monotonic()
        self._log.flush()
        self._run_starts = self._log.tell()  # the log is appended to: this run's lines start here
        return subprocess.Popen(
            self.command,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=self.pass_fds,
        )

    def respawn(self) -> None:
        """Start the same command again (its log goes on in the same file)."""
        self.popen = self._spawn()

    def log_text(self) -> str:
        """What this run of the process wrote (not earlier runs with the same log file)."""
        with open(self.log_path, "rb") as log:
            log.seek(self._run_starts)
            return log.read().decode(errors="replace")

    def wait_for(self, pattern: re.Pattern[str] | str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        while True:
            found = regex.search(self.log_text())
            if found:
                return found
            if self.popen.poll() is not None or time.monotonic() > deadline:
                text = self.log_text()
                tail = text[-1500:].partition("\n")[2] if len(text) > 1500 else text  # whole lines
                code = self.popen.poll()
                how = "in time" if code is None else f"(it {how_ended(code)})"
                raise RuntimeError(f"{self.name} did not get ready {how}:\n{tail}")
            time.sleep(0.05)

    def terminate(self) -> None:
        """Send SIGTERM to the process group once; ``stop()`` waits for it."""
        if self.popen.poll() is None and not self._terminated:
            self._terminated = True
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """SIGKILL to the process group: for a process whose work is thrown away (``stop()`` reaps it)."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 10.0) -> None:
        if self.popen.poll() is None:
            self.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait()
        self._log.close()


class Stack:
    def __init__(self, config: StackConfig | None = None) -> None:
        self.config = config or StackConfig()
        # the administration credential (send it with auth_metadata); also in host_token_path, mode 0600
        self.host_token = self.config.host_token or os.environ.get(HOST_TOKEN_ENV) or new_host_token()
        # the web app's read credential (its own rate limit at the services), given to every process
        self.web_token = os.environ.get(WEB_TOKEN_ENV) or new_host_token()
        for token, what in ((self.host_token, "the host token"), (self.web_token, f"${WEB_TOKEN_ENV}")):
            if len(token) < MIN_HOST_TOKEN:  # said here, not by the first process that refuses it and exits
                raise OhHellError(
                    f"{what} is {len(token)} characters: the services take one of at least {MIN_HOST_TOKEN}"
                )
        self.redis: EmbeddedRedis | None = None
        self.redis_url = self.config.redis_url or ""
        self.procs: list[Proc] = []
        self.engine_port = 0
        self.matchmaker_port = 0
        self.web_port = 0
        self.metrics_ports: dict[str, int] = {}
        self.workers: list[Proc] = []
        self.worker_restarts = 0
        # descriptors each process of the stack keeps open: ohell up's lock of its data folder (up.lock), then held
        # until the last of them ends (they outlive an ohell up killed by SIGKILL, and use the folder still)
        self.pass_fds: tuple[int, ...] = ()
        # each end of a worker the supervisor met, and how, for ohell up to say: "worker builtin0 exited with
        # status 1; started again (its log: PATH)" (a worker that ends at once every time is otherwise unseen)
        self.worker_ends: list[str] = []
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._own_log_dir = self.config.log_dir is None
        self.log_dir = Path(self.config.log_dir or tempfile.mkdtemp(prefix="ohell-stack-"))
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.database_url = self.config.database_url or os.environ.get(DATABASE_URL_ENV) or sqlite_url(self.log_dir)
        sqlite = self.database_url.startswith("sqlite:///") and "?" not in self.database_url
        own_folder(self.log_dir, Path(self.database_url.removeprefix("sqlite:///")) if sqlite else None)
        self.host_token_path = self.log_dir / "host-token"
        self.redis_url_path = self.log_dir / "redis-url"  # the embedded Redis's URL with its password, mode 600
        # the services listen here too, for the host and bot commands: a TCP port is every local user's (one
        # may listen on it while the stack is down and take the token a command sends), this folder ours alone
        self.no_socket_why: dict[str, str] = {}  # a folder too deep for a unix socket's path: the commands use TCP
        self.engine_socket = self._socket("engine", ENGINE_SOCKET)
        self.matchmaker_socket = self._socket("matchmaker", MATCHMAKER_SOCKET)
        if self.config.save_host_token:
            write_secret(self.host_token_path, self.host_token)

    def _socket(self, service: str, name: str) -> Path | None:
        try:
            return Path(socket_path(self.log_dir / name))
        except ConfigError as error:
            self.no_socket_why[service] = str(error)
            return None

    @property
    def matchmaker_address(self) -> str:
        return f"127.0.0.1:{self.matchmaker_port}"

    @property
    def engine_address(self) -> str:
        return f"127.0.0.1:{self.engine_port}"

    @property
    def web_url(self) -> str:
        host = (self.config.web_address or "127.0.0.1:0").rpartition(":")[0]
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.web_port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ) | {"REDIS_URL": self.redis_url, PREFIX_ENV: self.config.prefix, "PYTHONUNBUFFERED": "1"}
        env[HOST_TOKEN_ENV] = self.host_token
        env[WEB_TOKEN_ENV] = self.web_token
        env[DATABASE_URL_ENV] = self.database_url
        env |= self.config.env
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        return env

    def _embedded_redis(self) -> EmbeddedRedis:
        """A redis-server of this stack: a new password each start (every user of the machine can
        reach 127.0.0.1) and its data (deals, endpoint agents' tokens) in a folder of ours alone."""
        data = self.log_dir / "redis"
        data.mkdir(mode=0o700, exist_ok=True)
        data.chmod(0o700)  # made readable to all by a version that did not set it
        return EmbeddedRedis(
            data_dir=str(data), port=self.config.redis_port, password=secrets.token_hex(24), pass_fds=self.pass_fds
        )

    def _metrics_args(self, name: str) -> list[str]:
        if not self.config.metrics:
            return []
        self.metrics_ports[name] = free_port()
        return ["--metrics-port", str(self.metrics_ports[name])]

    def start(self, timeout: float = 60.0) -> Stack:
        try:
            if not self.redis_url:
                self.redis = self._embedded_redis().start()
                self.redis_url = self.redis.url
                write_secret(self.redis_url_path, self.redis_url)
            else:  # one of an earlier embedded run would send ohell ladder rebuild to a Redis not in use
                self.redis_url_path.unlink(missing_ok=True)
            python = sys.executable
            if self.config.engine:
                engine = self._spawn(
                    "engine",
                    [
                        python,
                        "-m",
                        "services.engine",
                        "--address",
                        self.config.engine_address,
                        *self._metrics_args("engine"),
                        *(["--agent-socket", str(self.engine_socket)] if self.engine_socket else []),
                    ],
                )
            matchmaker = self._spawn(
                "matchmaker",
                [
                    python,
                    "-m",
                    "services.matchmaker",
                    "--address",
                    self.config.matchmaker_address,
                    *self._metrics_args("matchmaker"),
                    *(["--admin-socket", str(self.matchmaker_socket)] if self.matchmaker_socket else []),
                    *(["--batch", str(self.config.batch)] if self.config.batch else []),
                    *self.config.matchmaker_args,
                ],
            )
            workers = [self.start_worker(f"builtin{i}") for i in range(self.config.builtin_workers)]
            if self.config.remote_worker:
                workers.append(self.start_worker("remote", remote=True))
            if self.config.engine:
                self.engine_port = int(engine.wait_for(PORT_LINE, timeout).group(1))
            self.matchmaker_port = int(matchmaker.wait_for(PORT_LINE, timeout).group(1))
            if self.config.web_address is not None:
                self.web_port = self._start_web(timeout)
            for worker in workers:
                worker.wait_for(WORKER_READY, timeout)
        except BaseException:
            self.stop()
            raise
        self._supervisor = threading.Thread(target=self._supervise, daemon=True, name="stack-supervisor")
        self._supervisor.start()
        return self

    def _start_web(self, timeout: float) -> int:
        command = [sys.executable, "-m", "services.web", "--address", self.config.web_address or "127.0.0.1:0"]
        command += ["--matchmaker", self.matchmaker_address]
        if self.config.engine:
            command += ["--engine", self.engine_address]
        return int(self._spawn("web", command).wait_for(PORT_LINE, timeout).group(1))

    def _supervise(self, every_s: float = 0.5) -> None:
        """Start a worker again when it exits on its own, as compose's ``restart: unless-stopped``
        or a Kubernetes Deployment would (a Celery worker can exit on a lost broker connection). One
        that ends within RESTART_STABLE_S of its start waits twice as long each time before the next
        start (from RESTART_FIRST_PAUSE_S up to RESTART_MAX_PAUSE_S, as Kubernetes backs off a crash
        loop): one broken for good was started, and said, twice a second for ever."""
        while not self._stopping.wait(every_s):
            for worker in list(self.workers):
                code = worker.popen.poll()
                if code is None or self._stopping.is_set():
                    continue
                now = time.monotonic()
                if worker.ended_at is None:
                    worker.ended_at = now
                    quick = now - worker.started_at < RESTART_STABLE_S
                    pause = min(2 * worker.restart_pause_s or RESTART_FIRST_PAUSE_S, RESTART_MAX_PAUSE_S)
                    worker.restart_pause_s = pause if quick else 0.0
                    again = f"started again in {pause:g} s" if quick else "started again"
                    self.worker_ends.append(f"{worker.name} {how_ended(code)}; {again} (its log: {worker.log_path})")
                if now - worker.ended_at >= worker.restart_pause_s:
                    worker.ended_at = None
                    worker.respawn()
                    self.worker_restarts += 1

    def start_worker(self, name: str, remote: bool = False, concurrency: int | None = None) -> Proc:
        """A Celery worker process (call ``wait_for(WORKER_READY)`` on the result before relying on it)."""
        env = self.env()
        if self.config.metrics:
            env["OHELL_METRICS_PORT"] = str(free_port())
            self.metrics_ports[f"worker-{name}"] = int(env["OHELL_METRICS_PORT"])
            env["PROMETHEUS_MULTIPROC_DIR"] = str(self.log_dir / f"metrics-{name}")
        stack_queues = Queues(self.config.prefix)
        queues = stack_queues.remote if remote else f"{stack_queues.builtin},{stack_queues.ratings}"
        pool = (
            ["-P", "threads", "-c", str(self.config.remote_concurrency)]
            if remote
            else ["-c", str(concurrency or self.config.concurrency)]
        )
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workers.app",
            "worker",
            "-Q",
            queues,
            *pool,
            "-n",
            f"{name}-{os.getpid()}@%h",
            "--loglevel",
            self.config.worker_log_level,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        proc = Proc(f"worker {name}", command, env, self.log_dir / f"worker-{name}.log")
        self.procs.append(proc)
        self.workers.append(proc)
        return proc

    def _spawn(self, name: str, command: list[str]) -> Proc:
        proc = Proc(name, command, self.env(), self.log_dir / f"{name}.log", self.pass_fds)
        self.procs.append(proc)
        return proc

    def ended_services(self) -> list[str]:
        """Each service of the stack that has ended, and how (``engine was killed by SIGKILL (signal 9)``):
        the embedded Redis and every process but the workers (the supervisor starts those again)."""
        ended = [
            f"{proc.name} {how_ended(code)}"
            for proc in self.procs
            if proc not in self.workers and (code := proc.popen.poll()) is not None
        ]
        if (
            self.redis is not None
            and self.redis.process is not None
            and (code := self.redis.process.poll()) is not None
        ):
            ended.append(f"redis {how_ended(code)}")
        return ended

    def log_tails(self, chars: int = 3000) -> str:
        """The end of each running process's log, for a report when something went wrong."""
        return "\n".join(f"--- {proc.name} ---\n{proc.log_text()[-chars:]}" for proc in self.procs)

    def stop(self, graceful: bool = True) -> None:
        """Stop every process: SIGTERM and wait, or with ``graceful=False`` SIGKILL (a stack thrown
        away with its data, as the tests' are: a clean stop takes a second or two)."""
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join()
        for proc in self.workers if graceful else self.procs:
            if graceful:  # a worker's warm shutdown takes a second or two: the workers take theirs together
                proc.terminate()
            else:
                proc.kill()
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()
        self.workers.clear()
        if self.redis is not None:
            self.redis.stop(kill=not graceful)

    def cleanup(self, graceful: bool = True) -> None:
        self.stop(graceful)
        if self.redis is not None:
            self.redis.cleanup()
            self.redis = None
        if self._own_log_dir:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
