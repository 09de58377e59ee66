"""The web app: ladders, leaderboards, agents, match history, replays, live matches, host pages."""
