"""A throwaway PostgreSQL server from the machine's binaries (``/usr/lib/postgresql/*/bin``, Debian's
``postgresql`` package), for the tests and the benchmark: a private data folder, 127.0.0.1 on a
free port, a private socket folder, stopped and removed afterwards. Never the machine's own server.

As root (containers, CI) the server runs as the ``postgres`` user through ``runuser``: PostgreSQL
refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

USER = "ohell"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries here (install Debian's ``postgresql``), or it would not start."""


def find_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding initdb (``OHELL_PG_BIN`` overrides)."""
    if os.environ.get("OHELL_PG_BIN"):
        return Path(os.environ["OHELL_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalPostgres:
    """``start()`` / ``stop()`` (the data stays: ``start()`` again brings it back) / ``cleanup()``."""

    def __init__(self, durable: bool = False) -> None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise PostgresUnavailable(
                "no initdb: install PostgreSQL's server binaries (Debian: apt-get install postgresql)"
            )
        self.bin_dir = bin_dir
        self.durable = durable  # False: fsync off (tests); True: the server's defaults (benchmarks)
        self.root = Path(tempfile.mkdtemp(prefix="ohell-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            [str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"]
        )

    def _run(self, command: list[str], timeout: float = 120) -> None:
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.root)
        if done.returncode:
            raise PostgresUnavailable(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")

    @property
    def log_path(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> LocalPostgres:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log_path), "-o", options, "-w", "start"]
        )
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(
                    f"host=127.0.0.1 port={self.port} user={USER} dbname=postgres", autocommit=True
                ) as c:
                    c.execute(f'CREATE DATABASE "{name}"')
                return self.url(name)
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def cleanup(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
