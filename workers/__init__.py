"""Celery workers of the ladder: ``celery -A workers.app worker -Q ohell.builtin,ohell.ratings``."""
