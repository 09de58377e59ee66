"""Fixtures of the archive tests: every test runs on SQLite and on PostgreSQL (``postgres_url`` in
tests/conftest.py: a server the tests start themselves)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.archive.db import connect, sqlite_url


@pytest.fixture(params=["sqlite", "postgresql"])
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path)
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def archive(archive_url: str) -> Iterator[Engine]:
    """The archive, migrated, on SQLite and on PostgreSQL."""
    engine = connect(archive_url)
    yield engine
    engine.dispose()
