"""Matches' event streams set up in Redis for the spectate tests, as a match host writes them."""

from __future__ import annotations

import redis

from arena.keys import Keys
from arena.proto.ohell.v1 import spectate_pb2


def start_matches(redis_url: str, match_ids: list[str]) -> None:
    """Streams of matches that have started and not ended: the engine follows each one with a reader."""
    client = redis.Redis.from_url(redis_url)
    for match_id in match_ids:
        started = spectate_pb2.MatchEvent(match_id=match_id, match_started=spectate_pb2.SpectateMatchStarted())
        client.xadd(Keys().match_events(match_id), {"e": started.SerializeToString()})
    client.close()
