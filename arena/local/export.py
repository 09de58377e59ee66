"""ohell ladder export NAME --out FOLDER: a ladder's results and match records into a folder.

The files, the same from either source:

  matches.jsonl    one match record (docs/record.md) per line, oldest first
  results.csv      one row per seat of each match: points, bids made, hands, faults, winner, forfeited
  leaderboard.csv  the ladder's standings (only through the running stack: ratings live in Redis)

By default it reads through the running stack with the host credential (the matchmaker's ListMatches
and GetMatch: archived matches and those only Redis holds yet); --limit N keeps the newest N. With
--database-url it reads the SQL archive directly, in rating-log order, with no stack running.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from arena.local.admin_client import Host, Unreachable, with_host
from arena.local.config import stack_archive
from arena.local.output import out_folder
from arena.rpc.files import files_written_whole
from arena.rpc.settings import shown_url
from ohell.errors import OhHellError

BOARD_COLUMNS = ("rank", "agent_id", "name", "ordinal", "mu", "sigma", "games", "exact_bid_rate", "wins")


MATCH_FILES = ("matches.jsonl", "results.csv")


def seat_rows(record: dict[str, Any], ladder: str, agent_ids: list[str], finished_ms: int) -> list[list[Any]]:
    """``results.csv``'s rows of one match, from its record."""
    from arena.archive.queries import CSV_COLUMNS  # SQLAlchemy and Redis: loaded by the command that exports
    from arena.ladder.matchlog import summarize

    summary = summarize(record, ladder, agent_ids)
    rows = []
    for seat, agent_id in enumerate(agent_ids):
        entry = record["seats"][seat] if seat < len(record.get("seats", ())) else {}
        row = {
            "match_id": record.get("match_id", ""),
            "finished_ms": finished_ms,
            "seat": seat,
            "agent_id": agent_id,
            "agent_name": entry.get("name", ""),
            "agent_version": entry.get("version", ""),
            "points": summary["totals"][seat],
            "bids_made": summary["exact"][seat],
            "hands": summary["hands"][seat],
            "faults": summary["faults"][seat],
            "winner": int(seat in summary["winners"]),
            "forfeited": int(seat in summary["forfeited"]),
        }
        rows.append([row[column] for column in CSV_COLUMNS])
    return rows


def write_matches(
    files: dict[str, TextIO], ladder: str, matches: Iterator[tuple[dict[str, Any], list[str], int]]
) -> int:
    """matches.jsonl and results.csv, open in ``files``, from (record, agent ids by seat, finished ms), oldest first."""
    from arena.archive.queries import CSV_COLUMNS

    written = 0
    writer = csv.writer(files["results.csv"])
    writer.writerow(CSV_COLUMNS)
    for record, agent_ids, finished_ms in matches:
        files["matches.jsonl"].write(json.dumps(record, separators=(",", ":")) + "\n")
        writer.writerows(seat_rows(record, ladder, agent_ids, finished_ms))
        written += 1
    return written


def from_stack(host: Host, args: argparse.Namespace) -> int:
    host.call("GetLadder", name=args.ladder)  # NOT_FOUND names an unknown ladder before any file is made
    folder = out_folder(args.out)
    # all three are put in place once the last match is written: the stack lost midway left a
    # leaderboard and matches cut short, which read as a whole export
    with files_written_whole(folder, ("leaderboard.csv", *MATCH_FILES)) as files:
        standings = list(host.pages("GetLeaderboard", "standings", ladder=args.ladder))
        writer = csv.writer(files["leaderboard.csv"])
        writer.writerow(BOARD_COLUMNS)
        for s in standings:
            writer.writerow([s.rank, s.agent_id, s.name, s.ordinal, s.mu, s.sigma, s.games, s.exact_bid_rate, s.wins])
        newest: list[Any] = []
        for summary in host.pages("ListMatches", "matches", ladder=args.ladder):
            if args.limit and len(newest) >= args.limit:
                break
            newest.append(summary)

        def matches() -> Iterator[tuple[dict[str, Any], list[str], int]]:
            for summary in reversed(newest):
                reply = host.call("GetMatch", match_id=summary.match_id)
                yield json.loads(reply.record_json), list(summary.agent_ids), summary.finished_ms

        written = write_matches(files, args.ladder, matches())
    print(f"{args.ladder}: {len(standings)} standings and {written} matches written to {folder}/")
    print("  leaderboard.csv, matches.jsonl (records, oldest first), results.csv (one row per seat)")
    return 0


def from_archive(args: argparse.Namespace) -> int:
    from sqlalchemy import make_url

    from arena.archive import queries
    from arena.archive.db import connect

    if args.limit:
        raise OhHellError("--limit works through the running stack; with --database-url every match is written")
    url = make_url(args.database_url)
    if url.drivername.startswith("sqlite") and not Path(url.database or "").is_file():
        raise OhHellError(f"--database-url {shown_url(args.database_url)}: no such SQLite file")
    engine = connect(args.database_url)
    try:
        if not queries.count_matches(engine, args.ladder):
            raise OhHellError(f"the archive at --database-url holds no match of ladder {args.ladder!r}")
        folder = out_folder(args.out)

        def matches() -> Iterator[tuple[dict[str, Any], list[str], int]]:
            for match in queries.in_log_order(engine, args.ladder):
                record = queries.get_record(engine, match.match_id) or {}
                yield record, [seat.agent_id for seat in match.seats], match.finished_ms

        with files_written_whole(folder, MATCH_FILES) as files:
            written = write_matches(files, args.ladder, matches())
    finally:
        engine.dispose()
    print(f"{args.ladder}: {written} archived matches written to {folder}/ (matches.jsonl, results.csv)")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise OhHellError(f"--limit must be 0 (all) or more, got {args.limit}")
    if args.database_url:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return from_archive(args)
        except OSError as error:
            raise OhHellError(f"{error.filename or 'file'}: {error.strerror or error}") from None
        except SQLAlchemyError as error:  # a URL it cannot use, a database it cannot reach
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise OhHellError(f"--database-url {shown_url(args.database_url)}: {first}") from None
    try:
        return with_host(from_stack)(args)
    except Unreachable as error:
        where = "URL"
        with contextlib.suppress(OhHellError):  # a config file ohell up refuses too: the hint names no archive
            archive = stack_archive(os.environ)
            where = f"{shown_url(archive.url)} ({archive.source})" if archive.url else where
        raise OhHellError(
            f"{error} (no file written); or read the archive with no stack running: --database-url {where}"
        ) from None
