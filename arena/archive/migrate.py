"""``python -m arena.archive.migrate``: bring the archive's schema to the newest revision, then exit.

Every process that uses the archive also migrates it on first use (``arena.archive.db.connect``);
deploy/ runs this first (compose's one-shot service ``migrate``, Kubernetes' init containers) so that
a database that refuses the processes (a wrong password, no such database) or cannot be migrated
stops the deployment as it starts, with the reason, instead of surfacing at the first match
archived or the first history page read. A database that does not answer is waited for (``--wait``);
with ``--unreachable-ok`` it is then left to the processes: the ladder plays on while the archive
is down (docs/operations.md, "Database down"), so a pod restarted meanwhile must still start.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

from alembic.runtime.migration import MigrationContext
from sqlalchemy.exc import ArgumentError, OperationalError

from arena.archive.db import DATABASE_URL_ENV, checked_url, connect
from arena.shown_urls import redacted, shown_url

RETRY_EVERY_S = 2.0
MAX_WAIT_S = 3600.0
# PostgreSQL's answers that mean "not now": starting up, shutting down or recovering, too many clients
NOT_NOW = {"57P03", "53300"}
NOT_NOW_TEXT = ("the database system is", "too many clients", "too many connections", "not yet accepting")


def wait_seconds(text: str) -> float:
    """--wait's value: seconds from 0 to MAX_WAIT_S (nan or inf waited for ever)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 <= seconds <= MAX_WAIT_S):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number of seconds from 0 to {MAX_WAIT_S:g}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena.archive.migrate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default=os.environ.get(DATABASE_URL_ENV),
        help=f"the archive (default: ${DATABASE_URL_ENV}; one of the two is required)",
    )
    parser.add_argument(
        "--wait",
        type=wait_seconds,
        default=120.0,
        metavar="SECONDS",
        help="keep trying this long while the database cannot be reached, as when it starts beside this "
        f"command, 0..{MAX_WAIT_S:g} (default %(default)s)",
    )
    parser.add_argument(
        "--unreachable-ok",
        action="store_true",
        help="when the database has not answered within --wait, say so and exit 0: the processes migrate "
        "on first use once it does (a database that answers with an error still fails)",
    )
    return parser


def unreachable(error: OperationalError) -> bool:
    """Whether the database did not answer (no connection, or "not now"), rather than refused."""
    state = getattr(error.orig, "sqlstate", None)
    if state is not None:
        return state in NOT_NOW or state.startswith("08")  # 08: connection exceptions
    # a refusal at connection time comes without a SQLSTATE, as libpq's text: "... failed: FATAL: ..."
    text = str(error.orig or error)
    return "FATAL:" not in text or any(phrase in text for phrase in NOT_NOW_TEXT)


def shown(url: str) -> str:
    """``url`` as printed: checked (``arena.archive.db.checked_url``: ArgumentError or ValueError when it
    is no URL) and with every secret of it hidden (``arena.shown_urls.shown_url``): SQLAlchemy's own
    rendering hides only what it parsed as the password, and printed ``?password=`` as it was."""
    checked_url(url)
    return shown_url(url)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.database_url:  # the processes' fallback, a SQLite file in the working directory, is no deployment's
        print(f"error: no archive to migrate: give --database-url or ${DATABASE_URL_ENV}", file=sys.stderr)
        return 2
    try:
        where = shown(args.database_url)
    except (ArgumentError, ValueError) as error:  # ValueError: a port that is no number
        why = redacted(str(error), args.database_url)
        print(f"error: the archive's URL (--database-url, else ${DATABASE_URL_ENV}) is not one: {why}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.wait
    said_waiting = False
    while True:
        try:
            engine = connect(args.database_url)
            break
        except OperationalError as error:
            reason = redacted(str(error.orig or error).strip().splitlines()[0], args.database_url)
            if not unreachable(error):
                print(f"error: the archive at {where} refused: {reason}", file=sys.stderr)
                return 1
            if time.monotonic() >= deadline:
                if args.unreachable_ok:
                    print(f"archive at {where} not reachable: left to the processes ({reason})", flush=True)
                    return 0
                print(f"error: cannot reach the archive at {where}: {reason}", file=sys.stderr)
                return 1
            if not said_waiting:
                print(f"waiting for the archive at {where}: {reason}", file=sys.stderr, flush=True)
                said_waiting = True
            time.sleep(max(0.0, min(RETRY_EVERY_S, deadline - time.monotonic())))
    with engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
    engine.dispose()
    print(f"archive at {where}: schema at revision {revision}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
