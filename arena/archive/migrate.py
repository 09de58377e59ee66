"""``python -m arena.archive.migrate``: bring the archive's schema to the newest revision, then exit.

Every process that uses the archive also migrates it on first use (``arena.archive.db.connect``);
deploy/ runs this first (compose's one-shot service ``migrate``, Kubernetes' init containers) so that
a database that cannot be reached or migrated stops the deployment as it starts, with the reason,
instead of surfacing at the first match archived or the first history page read.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from arena.archive.db import DATABASE_URL_ENV, connect

RETRY_EVERY_S = 2.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena.archive.migrate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default=os.environ.get(DATABASE_URL_ENV),
        help=f"the archive (default: ${DATABASE_URL_ENV}; one of the two is required)",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="keep trying this long while the database cannot be reached, as when it starts beside this "
        "command (default %(default)s)",
    )
    return parser


def shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.database_url:  # the processes' fallback, a SQLite file in the working directory, is no deployment's
        print(f"error: no archive to migrate: give --database-url or ${DATABASE_URL_ENV}", file=sys.stderr)
        return 2
    try:
        where = shown(args.database_url)
    except ArgumentError as error:
        print(f"error: ${DATABASE_URL_ENV} is not a database URL: {error}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.wait
    said_waiting = False
    while True:
        try:
            engine = connect(args.database_url)
            break
        except OperationalError as error:
            reason = str(error.orig or error).strip().splitlines()[0]
            if time.monotonic() >= deadline:
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
