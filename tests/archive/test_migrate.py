"""``python -m arena.archive.migrate``, what deploy/ runs before the matchmaker and the workers: the
schema at the newest revision (again: nothing to do), a refusal without a URL, a database that
never answers reported, its password unsaid, once the wait is over (or left to the processes with
``--unreachable-ok``), and one that answers with a refusal reported at once."""

from __future__ import annotations

import time

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect
from sqlalchemy.exc import ArgumentError

from arena.archive.db import DATABASE_URL_ENV, MIGRATIONS, create
from arena.archive.local_postgres import LocalPostgres
from arena.archive.migrate import build_parser, main
from arena.embedded_redis import free_port


def head() -> str:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    revision = ScriptDirectory.from_config(config).get_current_head()
    assert revision
    return revision


def test_migrates_an_empty_archive_to_the_newest_revision_and_again_changes_nothing(
    archive_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        assert main(["--database-url", archive_url]) == 0
        assert capsys.readouterr().out.strip().endswith(f"schema at revision {head()}")
    engine = create_engine(archive_url)
    try:
        assert {"matches", "match_seats", "match_records", "rating_history"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_refuses_to_run_without_an_archive_or_with_a_url_that_is_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert main([]) == 2
    assert DATABASE_URL_ENV in capsys.readouterr().err
    assert main(["--database-url", "postgres-on-port-5432"]) == 2
    assert capsys.readouterr().err.startswith("error: the archive's URL (--database-url, else $OHELL_DATABASE_URL)")


def test_a_database_that_never_answers_fails_after_the_wait_without_showing_its_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, f"postgresql+psycopg://ohell:s3cret-password@127.0.0.1:{free_port()}/ohell")
    started = time.monotonic()
    assert main(["--wait", "0.5"]) == 1
    assert 0.5 <= time.monotonic() - started < 30
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert lines[0].startswith("waiting for the archive at postgresql+psycopg://ohell:***@127.0.0.1:"), lines
    assert lines[-1].startswith("error: cannot reach the archive at postgresql+psycopg://ohell:***@"), lines
    assert "s3cret-password" not in said.err + said.out


def test_an_unreachable_database_may_be_left_to_the_processes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kubernetes' init containers: a pod restarted while PostgreSQL is down still starts, as the
    ladder plays on without its archive."""
    monkeypatch.setenv(DATABASE_URL_ENV, f"postgresql+psycopg://ohell:pw@127.0.0.1:{free_port()}/ohell")
    assert main(["--wait", "0.2", "--unreachable-ok"]) == 0
    assert "not reachable: left to the processes" in capsys.readouterr().out


def test_a_database_that_refuses_fails_at_once_whatever_the_wait(
    postgres_server: LocalPostgres, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main(["--database-url", postgres_server.url("no_such_database"), "--wait", "600", "--unreachable-ok"]) == 1
    assert time.monotonic() - started < 30
    err = capsys.readouterr().err
    assert err.startswith("error: the archive at postgresql+psycopg://") and "no_such_database" in err, err


@pytest.mark.parametrize("wait", ["nan", "inf", "-1", "3601", "soon"])
def test_a_wait_that_is_no_bounded_number_of_seconds_is_refused(wait: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--wait nan (or inf) never ended the wait for a database that does not answer: the deadline
    compared false for ever, and the init container held the pod in its start."""
    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(["--wait", wait])
    assert refused.value.code == 2 and "--wait" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("userinfo", "query", "secrets"),
    [
        ("ohell", "?password=Query-s3cret", ["Query-s3cret"]),  # libpq takes a password from the query
        ("ohell:pw", "?sslpassword=Key-s3cret", ["Key-s3cret"]),
    ],
)
def test_no_part_of_a_password_is_printed_wherever_the_url_holds_it(
    userinfo: str, query: str, secrets: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLAlchemy's rendering hides only what it parsed as the password: ``?password=`` was printed in
    every line."""
    url = f"postgresql+psycopg://{userinfo}@127.0.0.1:{free_port()}/ohell{query}"
    assert main(["--database-url", url, "--wait", "0"]) == 1
    said = capsys.readouterr()
    assert said.err.startswith("error: cannot reach the archive at postgresql+psycopg://ohell"), said.err
    assert not [secret for secret in secrets if secret in said.err + said.out], said.err


@pytest.mark.parametrize("password", ["Ab/s3cret+Cd", "Ab#s3cret", "Ab?s3cret"])
def test_a_password_with_a_slash_or_hash_or_question_mark_is_not_printed(
    password: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLAlchemy reads the password up to the first '@' (a base64 one holds '/' and '+'), where the
    URL's generic split (urlsplit) ends the host part at the '/' ('#', '?'): it found no password, and
    the URL was printed whole."""
    url = f"postgresql+psycopg://ohell:{password}@127.0.0.1:{free_port()}/ohell"
    assert main(["--database-url", url, "--wait", "0"]) == 1
    said = capsys.readouterr()
    assert said.err.startswith("error: cannot reach the archive at postgresql+psycopg://ohell"), said.err
    assert "s3cret" not in said.err + said.out, said.err


def test_a_port_that_is_no_number_is_a_malformed_url_without_its_password(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--database-url", "postgresql+psycopg://ohell:s3cret-password@127.0.0.1:port/ohell"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the archive's URL") and "s3cret-password" not in err, err


def test_a_bare_at_sign_in_the_password_is_refused_without_printing_any_of_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Of ``user:Before@After-s3cret@host`` SQLAlchemy hid ``Before`` and took ``After-s3cret@host``
    for the host, which the line and libpq's reason (failed to resolve host 'After-s3cret@127.0.0.1')
    named, as did every process's log line about the archive (``create``, which they all call, refuses it)."""
    url = f"postgresql+psycopg://ohell:Before@After-s3cret@127.0.0.1:{free_port()}/ohell"
    assert main(["--database-url", url, "--wait", "0"]) == 2
    said = capsys.readouterr()
    assert "write it as %40" in said.err and "s3cret" not in said.err + said.out and "Before" not in said.err, said.err
    with pytest.raises(ArgumentError, match="%40") as refused:
        create(url)
    assert "s3cret" not in str(refused.value)
