"""gRPC services of the platform: common harness, engine (agents, rules, spectate), matchmaker."""
