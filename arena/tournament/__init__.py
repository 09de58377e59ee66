"""Duplicate-deal tournaments beside the ladder: schedules, deal sets and seatings, standings, the store, jobs."""
