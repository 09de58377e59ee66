"""Alembic environment of the archive: ``arena.archive.db.connect`` runs it on an open connection
(config.attributes["connection"]); ``alembic`` on the command line needs ``-x url=...``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from arena.archive.schema import metadata

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
        with create_engine(str(url)).begin() as own:
            _migrate(own)
    else:
        _migrate(connection)


def _migrate(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
