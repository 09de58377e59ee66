"""``LadderStore``: the ``RedisStore`` part that keeps ladder definitions and their house bots."""

from __future__ import annotations

import json
from dataclasses import replace

from arena.keys import text
from arena.ladder.forming import HouseBot
from arena.ladder.limits import LADDER_NAME, MAX_LADDERS, check_ladder
from arena.ladder.model import HOUSE_PREFIX, Ladder
from arena.ladder.ratings import MODEL
from arena.ladder.redis_agents import AgentStore
from arena.ladder.store import AlreadyExists, InUse, LimitReached, NotFound, shown


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
        self._set_house(ladder.name, house_ids)
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

    def _set_house(self, ladder: str, house_ids: list[str]) -> None:
        with self.client.pipeline() as pipe:
            pipe.delete(self.keys.house(ladder))
            if house_ids:
                pipe.rpush(self.keys.house(ladder), *house_ids)
            pipe.execute()

    def update_ladder(self, ladder: Ladder) -> Ladder:
        """Replace a ladder's definition (its paused flag stays): the tables formed from now on follow it.
        A match claimed before keeps the seats, rules and think time it was claimed with. A ladder
        made host-only loses its self-registered agents' tickets."""
        current = self.get_ladder(ladder.name)
        ladder = replace(ladder, paused=current.paused)
        check_ladder(ladder)
        house_ids = self._house_agents(ladder)
        self.client.set(self.keys.ladder(ladder.name), ladder.to_json(), xx=True)
        self._set_house(ladder.name, house_ids)
        if ladder.entry != "open":  # after the new definition is set: a join from now on sees it
            self._drop_self_registered(args=[self.keys.prefix, ladder.name])
        return ladder

    def set_paused(self, name: str, paused: bool) -> Ladder:
        ladder = replace(self.get_ladder(name), paused=paused)
        self.client.set(self.keys.ladder(name), ladder.to_json(), xx=True)
        return ladder

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
