"""The matchmaker service: agents, ladders, queue tickets, leaderboard, history (``python -m services.matchmaker``)."""
