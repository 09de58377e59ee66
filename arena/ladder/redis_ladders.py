"""``LadderStore``: the ``RedisStore`` part that keeps ladder definitions and their house bots."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import replace

import redis

from arena.keys import text
from arena.ladder.forming import HouseBot
from arena.ladder.limits import LADDER_NAME, MAX_LADDERS, check_ladder
from arena.ladder.model import HOUSE_PREFIX, Ladder
from arena.ladder.ratings import MODEL
from arena.ladder.redis_agents import AgentStore
from arena.ladder.store import AlreadyExists, InUse, LimitReached, NotFound, shown

# What an update keeps of the stored definition: pause and resume set ``paused``; ``think_ms`` only the
# store's own callers set (the demo, tests): the Ladder message of UpdateLadder carries neither.
KEPT_ON_UPDATE = ("paused", "think_ms")


class LadderStore(AgentStore):
    """Ladders: create, update, pause, delete; which have tickets waiting; their house bots."""

    def create_ladder(self, ladder: Ladder) -> Ladder:
        check_ladder(ladder)
        if self.client.scard(self.keys.ladders) >= MAX_LADDERS:
            raise LimitReached(f"there are {MAX_LADDERS} ladders already (the limit): delete one first")
        house_ids = self._house_agents(ladder)
        if not self.client.set(self.keys.ladder(ladder.name), ladder.to_json(), nx=True):
            raise AlreadyExists(f"a ladder named {ladder.name!r} exists", "name")
        self.client.sadd(self.keys.ladders, ladder.name)
        with self.client.pipeline() as pipe:
            self._set_house(pipe, ladder.name, house_ids)
            pipe.execute()
        return ladder

    def _house_agents(self, ladder: Ladder) -> list[str]:
        """The ids of the ladder's house agents, registered when missing: seats - 1 of each house
        bot ("house-<bot>-<n>", n = 1, 2, ...), so a lone agent can fill a table with one kind. A
        name another agent holds (registered before the names were kept for the house), in any letter
        case, is passed over: 'House-random-1' refused every ladder with house bots once names were
        unique whatever their case."""
        house_ids = []
        for bot in ladder.house_bots:
            found, copy = 0, 0
            while found < ladder.seats - 1:
                copy += 1
                name = f"{HOUSE_PREFIX}{bot}-{copy}"
                try:
                    agent = self.agent_by_name(name)
                except NotFound:
                    try:
                        agent = self.register_agent(name, "builtin", bot=bot, house=True)[0]
                    except AlreadyExists:  # held in another letter case
                        continue
                if agent.house and agent.bot == bot:
                    house_ids.append(agent.agent_id)
                    found += 1
        return house_ids

    def _set_house(self, pipe: redis.client.Pipeline, ladder: str, house_ids: list[str]) -> None:
        """Queue, in ``pipe``, the writes that make ``house_ids`` the ladder's house agents."""
        pipe.delete(self.keys.house(ladder))
        if house_ids:
            pipe.rpush(self.keys.house(ladder), *house_ids)

    def update_ladder(self, ladder: Ladder, keep: Collection[str] = KEPT_ON_UPDATE) -> Ladder:
        """Replace a ladder's definition but the settings named in ``keep`` (the stored ones stay): the
        tables formed from now on follow it. A match claimed before keeps the seats, rules and think
        time it was claimed with. Read, merge and write are one transaction: a pause meanwhile stays.
        A ladder made host-only loses its self-registered agents' tickets."""
        current = self.get_ladder(ladder.name)
        check_ladder(replace(ladder, **{name: getattr(current, name) for name in keep}))
        house_ids = self._house_agents(ladder)
        updated = self._rewrite(
            ladder.name, lambda stored: replace(ladder, **{name: getattr(stored, name) for name in keep}), house_ids
        )
        if updated.entry != "open":  # after the new definition is set: a join from now on sees it
            self._drop_self_registered(args=[self.keys.prefix, ladder.name])
        return updated

    def set_paused(self, name: str, paused: bool) -> Ladder:
        return self._rewrite(name, lambda stored: replace(stored, paused=paused))

    def _rewrite(self, name: str, change: Callable[[Ladder], Ladder], house_ids: list[str] | None = None) -> Ladder:
        """Write ``change`` of the stored definition (and the house bots, when given) if the definition
        is unchanged since it was read (WATCH), else read it again: no change made meanwhile is lost."""
        key = self.keys.ladder(name)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key) if LADDER_NAME.fullmatch(name) else None
                    if raw is None:
                        raise NotFound(f"no ladder {shown(name)}", "ladder")
                    ladder = change(Ladder.from_json(raw))
                    pipe.multi()
                    pipe.set(key, ladder.to_json(), xx=True)
                    if house_ids is not None:
                        self._set_house(pipe, name, house_ids)
                    pipe.execute()
                    return ladder
                except redis.WatchError:
                    continue

    def delete_ladder(self, name: str) -> None:
        """Remove a ladder's definition, queue and tickets; its log, records and ratings stay. The
        check for matches in play and the deletion are one script, so no match is claimed between them."""
        if not LADDER_NAME.fullmatch(name):
            raise NotFound(f"no ladder {shown(name)}", "ladder")
        playing = int(self._delete_ladder(args=[self.keys.prefix, name]))
        if playing < 0:
            raise NotFound(f"no ladder {shown(name)}", "ladder")
        if playing:
            raise InUse(f"ladder {name!r} has {playing} match(es) in play: pause it and retry", "name")

    def forming_state(self) -> tuple[int, list[tuple[Ladder, int]]]:
        """(the archive's backlog, every ladder with its queued tickets), in one round trip: what
        the forming loop reads at the start of each round."""
        backlog, definitions, queued = self._round(args=[self.keys.prefix])
        pairs = zip(definitions, queued, strict=True)
        return int(backlog), [(Ladder.from_json(raw), int(count)) for raw, count in pairs if raw is not None]

    def house_bots(self, ladder: str) -> list[HouseBot]:
        """The ladder's house bots but those whose token was revoked (a revoked agent is seated nowhere)."""
        ids = [text(agent) for agent in self.client.lrange(self.keys.house(ladder), 0, -1)]
        if not ids:
            return []
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hmget(self.keys.ratings(ladder), ids)
            for agent in ids:
                pipe.hget(self.keys.agent(agent), "token_sha")
            ratings, *tokens = pipe.execute()
        found = zip(ids, ratings, tokens, strict=True)
        return [HouseBot(agent, json.loads(raw)[0] if raw else MODEL.mu) for agent, raw, token in found if token]
