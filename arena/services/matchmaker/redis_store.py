"""``RedisStore``: the matchmaker store on Redis 6.2 (keyspace in ``arena.ladder.keys``)."""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterable
from typing import Any, cast

import redis
from redis.typing import EncodableT, FieldT

from arena.ladder.keys import Keys, text
from arena.ladder.ratings import MODEL, STAT_FIELDS, WIN_SHARE
from arena.services.common.keyspace import token_hash
from arena.services.matchmaker.forming import HouseBot
from arena.services.matchmaker.model import AGENT_KINDS, Agent, Ladder, Standing
from arena.services.matchmaker.redis_queue import QueueOps
from arena.services.matchmaker.store import AlreadyExists, NotFound, StoreError, Unauthenticated
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError

AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LADDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.]{0,63}$")  # no '-': match ids are "{ladder}-{n}"


def now_ms() -> int:
    return int(time.time() * 1000)


class RedisStore(QueueOps):
    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        super().__init__(client, keys or Keys())

    # agents ---------------------------------------------------------------------------------
    def register_agent(
        self, name: str, kind: str, version: str = "", bot: str = "", endpoint: str = "", house: bool = False
    ) -> tuple[Agent, str]:
        if not AGENT_NAME.match(name):
            raise StoreError(f"name {name!r} must be 1-64 letters, digits, '_', '.', '-'", "name")
        if kind not in AGENT_KINDS:
            raise StoreError(f"kind {kind!r} must be one of {', '.join(AGENT_KINDS)}", "kind")
        if kind == "builtin" and bot not in BOT_FACTORIES:
            raise StoreError(f"bot {bot!r} is not a built-in bot ({', '.join(sorted(BOT_FACTORIES))})", "bot")
        if kind == "endpoint" and not re.match(r"^[\w.\-\[\]:]+:\d+$", endpoint):
            raise StoreError(f"endpoint {endpoint!r} must look like host:port", "endpoint")
        if len(version) > 64:
            raise StoreError("version must be at most 64 characters", "version")
        number = self.client.incr(self.keys.agent_seq)
        agent = Agent(f"a{number}", name, kind, version, bot if kind == "builtin" else "",
                      endpoint if kind == "endpoint" else "", house, now_ms())  # fmt: skip
        if not self.client.hsetnx(self.keys.agent_names, name, agent.agent_id):
            raise AlreadyExists(f"an agent named {name!r} exists", "name")
        token = secrets.token_urlsafe(24)
        fields: dict[FieldT, EncodableT] = {
            "agent_id": agent.agent_id, "name": name, "kind": kind, "version": version, "bot": agent.bot,
            "endpoint": agent.endpoint, "house": int(house), "created_ms": agent.created_ms,
            "token_sha": token_hash(token),
        }  # fmt: skip
        with self.client.pipeline() as pipe:
            pipe.hset(self.keys.agent(agent.agent_id), mapping=fields)
            pipe.hset(self.keys.agent_tokens, token_hash(token), agent.agent_id)
            pipe.execute()
        return agent, token

    def authenticate(self, agent_id: str, token: str) -> Agent:
        stored = self.client.hget(self.keys.agent(agent_id), "token_sha")
        if stored is None or not secrets.compare_digest(text(stored), token_hash(token)):
            raise Unauthenticated(f"no agent {agent_id!r} with this token", "token")
        return self.get_agent(agent_id)

    def agent_for_token(self, token: str) -> Agent | None:
        agent_id = self.client.hget(self.keys.agent_tokens, token_hash(token))
        return self.get_agent(text(agent_id)) if agent_id else None

    def get_agent(self, agent_id: str) -> Agent:
        return self.get_agents([agent_id])[agent_id]

    def get_agents(self, agent_ids: Iterable[str]) -> dict[str, Agent]:
        """Several agents in one round trip."""
        ids = list(dict.fromkeys(agent_ids))
        with self.client.pipeline(transaction=False) as pipe:
            for agent_id in ids:
                pipe.hgetall(self.keys.agent(agent_id))
            found = pipe.execute()
        agents = {}
        for agent_id, raw in zip(ids, found, strict=True):
            if not raw:
                raise NotFound(f"no agent {agent_id!r}", "agent_id")
            agents[agent_id] = _agent(raw)
        return agents

    def agent_by_name(self, name: str) -> Agent:
        agent_id = self.client.hget(self.keys.agent_names, name)
        if agent_id is None:
            raise NotFound(f"no agent named {name!r}", "name")
        return self.get_agent(text(agent_id))

    def set_version(self, agent_id: str, version: str) -> Agent:
        if not version or len(version) > 64:
            raise StoreError("version must be 1-64 characters", "version")
        self.get_agent(agent_id)
        self.client.hset(self.keys.agent(agent_id), "version", version)
        return self.get_agent(agent_id)

    # ladders --------------------------------------------------------------------------------
    def create_ladder(self, ladder: Ladder) -> Ladder:
        if not LADDER_NAME.match(ladder.name):
            raise StoreError(f"ladder name {ladder.name!r} must be 1-64 of a-z 0-9 '_' '.'", "name")
        if not 3 <= ladder.seats <= 7:
            raise StoreError(f"seats={ladder.seats} must be from 3 to 7", "seats")
        try:
            ladder.rules()
        except OhHellError as error:
            raise StoreError(str(error), "rules") from None
        unknown = [bot for bot in ladder.house_bots if bot not in BOT_FACTORIES]
        if unknown:
            raise StoreError(f"house bot {unknown[0]!r} is not a built-in bot", "house_bots")
        if ladder.house_fill and not ladder.house_bots:
            raise StoreError("house_fill needs at least one house bot", "house_bots")
        if ladder.fill_after_s < 0 or ladder.base_window < 0 or ladder.widen_per_s < 0 or ladder.think_ms < 0:
            raise StoreError("fill_after_s, base_window, widen_per_s and think_ms must be >= 0", "ladder")
        if not self.client.set(self.keys.ladder(ladder.name), ladder.to_json(), nx=True):
            raise AlreadyExists(f"ladder {ladder.name!r} exists", "name")
        self.client.sadd(self.keys.ladders, ladder.name)
        house_ids = []
        for bot in ladder.house_bots:  # seats - 1 of each, so a lone agent can fill a table with one kind
            for copy in range(1, ladder.seats):
                name = f"house-{bot}-{copy}"
                try:
                    house_ids.append(self.agent_by_name(name).agent_id)
                except NotFound:
                    house_ids.append(self.register_agent(name, "builtin", bot=bot, house=True)[0].agent_id)
        if house_ids:
            self.client.rpush(self.keys.house(ladder.name), *house_ids)
        return ladder

    def get_ladder(self, name: str) -> Ladder:
        raw = self.client.get(self.keys.ladder(name))
        if raw is None:
            raise NotFound(f"no ladder {name!r}", "ladder")
        return Ladder.from_json(raw)

    def list_ladders(self) -> list[Ladder]:
        return [self.get_ladder(text(name)) for name in sorted(self.client.smembers(self.keys.ladders))]

    def house_bots(self, ladder: str) -> list[HouseBot]:
        ids = [text(agent) for agent in self.client.lrange(self.keys.house(ladder), 0, -1)]
        ratings = self.client.hmget(self.keys.ratings(ladder), ids) if ids else []
        pairs = zip(ids, ratings, strict=True)
        return [HouseBot(agent, json.loads(raw)[0] if raw else MODEL.mu) for agent, raw in pairs]

    # ratings (read side) ----------------------------------------------------------------------
    def leaderboard(self, ladder: str, offset: int, limit: int) -> tuple[list[Standing], int]:
        self.get_ladder(ladder)
        total = self.client.zcard(self.keys.board(ladder))
        # without withscores ZREVRANGE gives members only; redis-py's return type also covers the pairs
        members = cast(list[bytes | str], self.client.zrevrange(self.keys.board(ladder), offset, offset + limit - 1))
        ids = [text(a) for a in members]
        return [self.standing(ladder, agent, rank=offset + i + 1) for i, agent in enumerate(ids)], total

    def standing(self, ladder: str, agent_id: str, rank: int = 0) -> Standing:
        agent = self.get_agent(agent_id)
        raw = self.client.hget(self.keys.ratings(ladder), agent_id)
        mu, sigma = json.loads(raw) if raw else (MODEL.mu, MODEL.sigma)
        counted = self.client.hget(self.keys.stats(ladder), agent_id)
        counts: dict[str, Any] = dict(zip(STAT_FIELDS, json.loads(counted) if counted else [0] * 7, strict=True))
        if not rank and raw:
            # without withscore ZREVRANK gives the rank only; redis-py's return type also covers [rank, score]
            position = cast(int | None, self.client.zrevrank(self.keys.board(ladder), agent_id))
            rank = position + 1 if position is not None else 0
        wins = counts.pop("win_shares") / WIN_SHARE
        return Standing(agent_id, agent.name, mu, sigma, wins=wins, rank=rank, **counts)


def _agent(raw: dict[bytes, bytes]) -> Agent:
    data = {text(k): text(v) for k, v in raw.items()}
    return Agent(
        data["agent_id"], data["name"], data["kind"], data.get("version", ""), data.get("bot", ""),
        data.get("endpoint", ""), data.get("house") == "1", int(data.get("created_ms", 0)),
    )  # fmt: skip
