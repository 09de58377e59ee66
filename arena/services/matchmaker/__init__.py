"""The matchmaker service: agents, ladders, queue tickets, table forming, leaderboard, history."""
