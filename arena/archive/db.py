"""Connecting to the archive: the database URL, engine options, migrations to head.

The URL comes from ``OHELL_DATABASE_URL`` (PostgreSQL in deploy/: ``postgresql+psycopg://...``);
``ohell up`` and ``ohell demo`` set it to a SQLite file in their data folder when it is unset.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

DATABASE_URL_ENV = "OHELL_DATABASE_URL"
SQLITE_FILE = "archive.sqlite3"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
PG_MIGRATION_LOCK = 0x0E11  # pg_advisory_lock key: one process migrates at a time


def sqlite_url(folder: str | os.PathLike[str]) -> str:
    """The embedded default: a SQLite file in ``folder``."""
    return f"sqlite:///{Path(folder).resolve() / SQLITE_FILE}"


def database_url(default_folder: str | os.PathLike[str] | None = None) -> str:
    """``OHELL_DATABASE_URL``, else a SQLite file in ``default_folder`` (else the working directory)."""
    return os.environ.get(DATABASE_URL_ENV) or sqlite_url(default_folder or os.getcwd())


def checked_url(url: str) -> URL:
    """``url`` parsed; ArgumentError (or ValueError: a port that is no number) for one that is none,
    and for a bare '@' in its user name or password: SQLAlchemy reads the password up to its first
    '@' and the rest as the host, which every error (and log line) of a process that cannot reach that
    host then names."""
    if "@" in urlsplit(url).netloc.rpartition("@")[0]:
        raise ArgumentError("the archive's URL has a bare '@' in its user name or password: write it as %40")
    return make_url(url)


def create(url: str) -> Engine:
    """An engine without touching the schema. PostgreSQL connections are checked before use (a
    restarted server leaves dead ones in the pool); SQLite runs in WAL mode with a busy timeout,
    so worker processes and the matchmaker share one file."""
    parsed = checked_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if parsed.drivername == "postgresql":  # psycopg 3 is the driver we ship
        parsed = parsed.set(drivername="postgresql+psycopg")
    return create_engine(parsed, pool_pre_ping=True, pool_size=4, max_overflow=4, connect_args={"connect_timeout": 5})


WRITE = "ohell_write"  # execution option of a transaction that writes: on SQLite it takes the lock at BEGIN


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    connection.isolation_level = None  # the driver's own implicit BEGIN off: _sqlite_begin says when
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    """A writing transaction takes SQLite's write lock at BEGIN (waiting up to the busy timeout):
    a reader that turns into a writer later could instead fail at once on another's commit."""
    connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")


def connect(url: str) -> Engine:
    """An engine on ``url`` with the schema migrated to the newest revision (safe to call from
    several processes at once: they take turns)."""
    engine = create(url)
    migrate(engine)
    return engine


def migrate(engine: Engine, revision: str = "head") -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _migration_lock(engine), engine.connect() as connection, connection.execution_options(**{WRITE: True}).begin():
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": PG_MIGRATION_LOCK})
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": PG_MIGRATION_LOCK})
                connection.commit()
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
