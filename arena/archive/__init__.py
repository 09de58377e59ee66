"""The durable match archive: finished matches in a SQL database (SQLAlchemy Core, Alembic)."""
