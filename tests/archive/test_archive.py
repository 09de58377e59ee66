"""The archive on its own (SQLite and a real PostgreSQL): migrations, exactly-once writes, queries, export."""

from __future__ import annotations

import csv
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, inspect, select

from arena import wire
from arena.archive import queries
from arena.archive.db import connect, sqlite_url
from arena.archive.schema import match_seats, matches, rating_history
from arena.archive.writer import FinishedMatch, SeatResult, write
from arena.record_codec import pack_record


def finished(n: int, ladder: str = "l", agents: tuple[str, ...] = ("a1", "a2", "a3")) -> FinishedMatch:
    match_id = f"{ladder}-{n}"
    totals = [n % 7, 10, 3][: len(agents)]
    record = {"match_id": match_id, "rules": {"hand_sizes": [2]}, "hands": [{"bids": [1, 0, 1]}], "totals": totals}
    seats = [
        SeatResult(
            agent,
            f"name-{agent}",
            "v1",
            "builtin",
            totals[i],
            1,
            i % 2,
            0,
            i == 1,
            False,
            (25.0 + n, 8.0, 25.5 + n, 7.9),
        )
        for i, agent in enumerate(agents)
    ]
    finished_ms = 1_000_000 + n * 10
    rules = record["rules"]
    blob, size = pack_record(record)
    return FinishedMatch(match_id, ladder, f"{1000 + n}-0", 1, 2, finished_ms, 1, blob, size, rules, 1, seats)


def count(engine: Engine, table: object) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())  # type: ignore[arg-type]


def test_connect_migrates_to_head_and_again_changes_nothing(archive_url: str) -> None:
    first = connect(archive_url)
    second = connect(archive_url)
    tables = set(inspect(second).get_table_names())
    assert {"matches", "match_seats", "match_records", "rating_history", "alembic_version"} <= tables
    first.dispose()
    second.dispose()


def test_writing_a_match_twice_stores_it_once(archive: Engine) -> None:
    batch = [finished(n) for n in range(5)]
    assert write(archive, batch).inserted == [m.match_id for m in batch]
    assert write(archive, batch + [finished(5)]).inserted == ["l-5"]  # the five again: skipped whole
    assert count(archive, matches) == 6
    assert count(archive, match_seats) == 18
    assert count(archive, rating_history) == 18
    assert write(archive, []).inserted == []


def test_a_match_reads_back_as_written(archive: Engine) -> None:
    match = finished(3)
    write(archive, [match])
    got = queries.get_match(archive, "l-3")
    assert got is not None
    assert [s.agent_name for s in got.seats] == ["name-a1", "name-a2", "name-a3"]
    assert got.totals == [3, 10, 3] and got.winners == [1] and got.rules == {"hand_sizes": [2]}
    assert [s.bids_made for s in got.seats] == [0, 1, 0]
    assert queries.get_record(archive, "l-3") == match.record()
    assert queries.get_match(archive, "l-99") is None and queries.get_record(archive, "l-99") is None


def test_list_by_ladder_agent_and_time_in_pages(archive: Engine) -> None:
    write(archive, [finished(n) for n in range(10)])
    write(archive, [finished(n, "other", ("a1", "b2", "b3")) for n in range(4)])
    newest = queries.list_matches(archive, ladder="l", limit=4)
    assert [m.match_id for m in newest] == ["l-9", "l-8", "l-7", "l-6"]
    pages, before = [], ""
    while True:
        page = queries.list_matches(archive, ladder="l", limit=3, before=before)
        if not page:
            break
        pages.append([m.match_id for m in page])
        before = page[-1].cursor
    assert sum(pages, []) == [f"l-{n}" for n in range(9, -1, -1)]
    assert len(queries.list_matches(archive, agent_id="a1", limit=100)) == 14
    assert {m.ladder for m in queries.list_matches(archive, agent_id="b2", limit=100)} == {"other"}
    assert queries.list_matches(archive, ladder="l", agent_id="b2") == []
    ranged = queries.list_matches(archive, ladder="l", since_ms=1_000_020, until_ms=1_000_050)
    assert [m.match_id for m in ranged] == ["l-4", "l-3", "l-2"]
    with pytest.raises(queries.BadCursor):
        queries.list_matches(archive, before="not-a-cursor")


def test_an_agents_pages_and_count_read_only_its_newest_seats(tmp_path: Path) -> None:
    """A public page (an agent's, ListMatches by agent) read every match the agent ever played to sort
    them, on each page and again to count them: 60 ms a page for an agent of 30,000 matches on
    SQLite, growing with its history (a house bot's on a busy ladder), for any anonymous caller. The
    query plans read its seats in order from their index instead, and the pages stay the same."""
    engine = connect(sqlite_url(tmp_path))
    write(engine, [finished(n, "l" if n % 2 else "m", ("a1", f"b{n}", f"c{n}")) for n in range(12)])
    plans: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def explain(connection: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if "match_seats.agent_id = ?" in statement:  # the pages and the count, not the seats read after
            rows = cursor.connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
            plans.append(" | ".join(str(row[-1]) for row in rows))

    pages, before = [], ""
    while page := queries.list_matches(
        engine, agent_id="a1", since_ms=1_000_010, until_ms=1_000_110, limit=4, before=before
    ):
        pages.append([m.match_id for m in page])
        before = page[-1].cursor
    assert sum(pages, []) == [f"{'l' if n % 2 else 'm'}-{n}" for n in range(10, 0, -1)]
    assert queries.count_matches(engine, "l", "a1", since_ms=1_000_010) == 6
    event.remove(engine, "before_cursor_execute", explain)
    engine.dispose()
    assert plans and all("match_seats_agent_finished" in plan for plan in plans), plans
    assert not any("TEMP B-TREE FOR ORDER BY" in plan for plan in plans), plans  # no sort of all its matches
    assert not any("SCAN matches" in plan for plan in plans), plans


def test_rating_history_is_oldest_first_and_paged(archive: Engine) -> None:
    write(archive, [finished(n) for n in (2, 0, 1)])
    points = queries.rating_history(archive, "l", "a2")
    assert [p.match_id for p in points] == ["l-0", "l-1", "l-2"]
    assert points[1].mu_before == 26.0 and points[1].mu_after == 26.5
    second = queries.rating_history(archive, "l", "a2", limit=2, after=points[0].cursor)
    assert [p.match_id for p in second] == ["l-1", "l-2"]
    assert queries.rating_history(archive, "l", "nobody") == []


def test_rating_history_newest_first_gives_the_latest_page(archive: Engine) -> None:
    """The agent page read the history oldest first, up to 50,000 points in pages of 5,000: a long
    history cost ten calls per view, and past the cap the newest points were the ones left out."""
    write(archive, [finished(n) for n in (3, 0, 2, 1)])
    latest = queries.rating_history(archive, "l", "a2", limit=2, newest_first=True)
    assert [p.match_id for p in latest] == ["l-3", "l-2"]
    older = queries.rating_history(archive, "l", "a2", limit=5, after=latest[-1].cursor, newest_first=True)
    assert [p.match_id for p in older] == ["l-1", "l-0"]


def test_export_in_log_order(archive: Engine) -> None:
    write(archive, [finished(n) for n in (4, 1, 3)])
    lines = io.StringIO()
    assert queries.export_jsonl(archive, "l", lines) == 3
    assert [json.loads(line)["match_id"] for line in lines.getvalue().splitlines()] == ["l-1", "l-3", "l-4"]
    table = io.StringIO()
    assert queries.export_csv(archive, "l", table) == 3
    rows = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert len(rows) == 9 and rows[0]["match_id"] == "l-1" and rows[0]["agent_name"] == "name-a1"
    assert [r["winner"] for r in rows[:3]] == ["0", "1", "0"]
    summaries = [queries.summary(m) for m in queries.in_log_order(archive, "l")]
    assert [s["match_id"] for s in summaries] == ["l-1", "l-3", "l-4"] and summaries[0]["agents"] == ["a1", "a2", "a3"]


def test_two_writers_racing_with_the_same_matches_store_them_once(archive: Engine) -> None:
    batch = [finished(n) for n in range(30)]
    results: list[list[str]] = []
    barrier = threading.Barrier(2)

    def writer() -> None:
        barrier.wait()
        results.append(write(archive, batch).inserted)

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results[0] + results[1]) == sorted(m.match_id for m in batch)  # each written by one
    assert count(archive, matches) == 30 and count(archive, match_seats) == 90


def test_the_migrations_ship_as_package_data() -> None:
    """``pip install`` (not only an editable checkout) must carry every migration file."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["arena.archive"]
    package = root / "arena" / "archive"
    files = [p.relative_to(package).as_posix() for p in (package / "migrations").rglob("*") if p.is_file()]
    files = [f for f in files if "__pycache__" not in f]
    assert "migrations/versions/0001_initial.py" in files
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files), files


def test_a_value_with_a_nul_is_in_no_row_on_either_database(archive: Engine) -> None:
    """A caller's id may hold a NUL (GetMatch's match_id, ListMatches' agent_id): PostgreSQL's text
    cannot, and refused the query (DataError, which the matchmaker answers UNAVAILABLE: "the archive
    is unavailable"). No row holds one: the queries find nothing, and a cursor with one is no cursor."""
    write(archive, [finished(0)])
    assert queries.get_match(archive, "l-0\x00") is None and queries.get_record(archive, "\x00") is None
    assert queries.list_matches(archive, ladder="l\x00") == [] == queries.list_matches(archive, agent_id="a1\x00")
    assert queries.count_matches(archive, ladder="l", agent_id="\x00") == 0
    assert queries.rating_history(archive, "l", "a1\x00") == [] == queries.rating_history(archive, "l\x00", "a1")
    assert queries.archived(archive, ["l-0", "l-0\x00"]) == {"l-0"}
    with pytest.raises(queries.BadCursor):
        queries.list_matches(archive, ladder="l", before="1:l-0\x00")
    with pytest.raises(queries.BadCursor):
        queries.rating_history(archive, "l", "a1", after="1:l-0\x00")
    assert [m.match_id for m in queries.list_matches(archive, ladder="l")] == ["l-0"]


def test_a_capped_count_stops_one_past_its_cap(archive: Engine) -> None:
    """ListMatches counted every row its filters select on each page (7-9 ms at 300,000 matches on
    SQLite, for any anonymous caller): it now counts up to one past ``COUNT_CAP``."""
    write(archive, [finished(n) for n in range(7)])
    assert queries.count_matches(archive, "l") == 7  # uncapped: exact
    assert queries.count_matches(archive, "l", cap=3) == 4 == queries.count_matches(archive, "l", "a1", cap=3)
    assert queries.count_matches(archive, "l", cap=7) == 7 == queries.count_matches(archive, "l", "a2", cap=10)
    assert queries.COUNT_CAP == wire.MATCHES_COUNTED_UP_TO  # what readers are told "more than" means
    assert wire.match_total_text(10_000) == "10000" and wire.match_total_text(10_001) == "more than 10,000"
