"""The game-engine service: agent gateway, match host, rules API, challenge and spectate."""
