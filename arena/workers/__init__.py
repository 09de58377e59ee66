"""Celery workers of the ladder: ``celery -A arena.workers.app worker -Q ohell.builtin,ohell.ratings``."""
