"""``RedisStore``: the ladder's store on Redis 6.2 (keyspace in ``arena.keys``, scripts in
``arena.ladder.scripts``), made of its parts: ``redis_base`` (client, scripts, shared lookups),
``redis_agents``, ``redis_ladders``, ``redis_ratings``, ``redis_queue``, ``redis_matches`` and
``redis_archive``."""

from __future__ import annotations

from arena.keys import Keys
from arena.ladder.redis_archive import ArchiveStore
from arena.ladder.redis_ladders import LadderStore
from arena.ladder.redis_matches import MatchStore
from arena.ladder.redis_queue import QueueStore
from arena.ladder.redis_ratings import RatingStore
from arena.redis_client import retrying_client


class RedisStore(LadderStore, RatingStore, QueueStore, MatchStore, ArchiveStore):
    """The store of agents, ladders, tickets, matches and ratings on Redis 6.2: the one implementation
    (its guarantees: ``arena.ladder.store``)."""

    @classmethod
    def connect(cls, redis_url: str, keys: Keys | None = None, retries: int = 10) -> RedisStore:
        """A store on a retrying client (see ``arena.redis_client``)."""
        return cls(retrying_client(redis_url, retries, health_check_interval=10), keys)
