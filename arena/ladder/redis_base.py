"""``StoreBase``: what every part of ``RedisStore`` stands on: the client, the keyspace, the
registered scripts, and the lookups of agents, ladders and matches the parts share."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

import redis

from arena.keys import AGENT_ID, Keys, text
from arena.ladder import scripts
from arena.ladder.limits import LADDER_NAME
from arena.ladder.model import Agent, Ladder, MatchInfo
from arena.ladder.routing import Queues
from arena.ladder.store import NotFound, shown
from arena.play.specs import SeatSpec

# The match ids this store issues (``scripts.START``; agent ids: ``arena.keys.AGENT_ID``). An id of
# another shape is not looked up: "<match>:events" is a match's event stream, of another type.
MATCH_ID = re.compile(r"^[a-z0-9][a-z0-9_.]{0,63}-[0-9]{1,18}$")  # "<ladder>-<n>"


class StoreBase:
    """The client, keys and scripts of the store, and its shared lookups."""

    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.client = client
        self.keys = keys or Keys()
        self.queues = Queues(self.keys.prefix)
        self._snapshot = client.register_script(Keys.lua(scripts.SNAPSHOT))
        self._name = client.register_script(Keys.lua(scripts.NAME))
        self._claim = client.register_script(Keys.lua(scripts.CLAIM))
        self._join = client.register_script(Keys.lua(scripts.JOIN))
        self._drop_self_registered = client.register_script(Keys.lua(scripts.DROP_SELF_REGISTERED))
        self._start = client.register_script(Keys.lua(scripts.START))
        self._renew = client.register_script(scripts.RENEW)
        self._finish = client.register_script(Keys.lua(scripts.FINISH))
        self._fail = client.register_script(Keys.lua(scripts.FAIL))
        self._forget = client.register_script(Keys.lua(scripts.FORGET))
        self._hold = client.register_script(Keys.lua(scripts.HOLD))
        self._release_if_held = client.register_script(scripts.RELEASE_IF_HELD)
        self._round = client.register_script(Keys.lua(scripts.ROUND))
        self._delete_ladder = client.register_script(Keys.lua(scripts.DELETE_LADDER))
        self._raise_match_seq = client.register_script(Keys.lua(scripts.RAISE_MATCH_SEQ))

    def get_agent(self, agent_id: str) -> Agent:
        return self.get_agents([agent_id])[agent_id]

    def get_agents(self, agent_ids: Iterable[str]) -> dict[str, Agent]:
        """Several agents in one round trip."""
        ids = list(dict.fromkeys(agent_ids))
        for agent_id in ids:
            if not AGENT_ID.fullmatch(agent_id):
                raise NotFound(f"no agent {shown(agent_id)}", "agent_id")
        with self.client.pipeline(transaction=False) as pipe:
            for agent_id in ids:
                pipe.hgetall(self.keys.agent(agent_id))
            found = pipe.execute()
        agents = {}
        for agent_id, raw in zip(ids, found, strict=True):
            if not raw:
                raise NotFound(f"no agent {shown(agent_id)}", "agent_id")
            agents[agent_id] = parse_agent(raw)
        return agents

    def agent_by_name(self, name: str) -> Agent:
        agent_id = self.client.hget(self.keys.agent_names, name)
        if agent_id is None:
            raise NotFound(f"no agent named {shown(name)}", "name")
        return self.get_agent(text(agent_id))

    def get_ladder(self, name: str) -> Ladder:
        raw = self.client.get(self.keys.ladder(name)) if LADDER_NAME.fullmatch(name) else None
        if raw is None:
            raise NotFound(f"no ladder {shown(name)}", "ladder")
        return Ladder.from_json(raw)

    def list_ladders(self) -> list[Ladder]:
        names = sorted(text(name) for name in self.client.smembers(self.keys.ladders))
        found = self.client.mget([self.keys.ladder(name) for name in names]) if names else []
        return [Ladder.from_json(raw) for raw in found if raw is not None]

    def get_match(self, match_id: str) -> MatchInfo:
        raw = self.client.hgetall(self.keys.match(match_id)) if MATCH_ID.fullmatch(match_id) else None
        if not raw:
            raise NotFound(f"no match {shown(match_id)}", "match_id")
        return parse_match(raw)

    def active_matches(self) -> list[str]:
        return sorted(text(m) for m in self.client.smembers(self.keys.active))


def parse_agent(raw: dict[bytes, bytes]) -> Agent:
    data = {text(k): text(v) for k, v in raw.items()}
    return Agent(
        data["agent_id"],
        data["name"],
        data["kind"],
        data.get("version", ""),
        data.get("bot", ""),
        data.get("endpoint", ""),
        data.get("house") == "1",
        int(data.get("created_ms", 0)),
        data.get("self_registered") == "1",
        data.get("dial_token", ""),
        data.get("token_sha") == "",  # as join (scripts.JOIN) and the challenge gateway read it
        int(data.get("revoked_ms") or 0),
    )


def parse_match(raw: Mapping[bytes | str, bytes | str]) -> MatchInfo:
    data = {text(k): text(v) for k, v in raw.items()}
    return MatchInfo(
        data["match_id"],
        data["ladder"],
        data["state"],
        [SeatSpec.from_dict(s) for s in json.loads(data["seats"])],
        data["queue"],
        int(data["created_ms"]),
        int(data.get("started_ms", 0)),
        int(data.get("finished_ms", 0)),
        int(data.get("attempts", 0)),
        data.get("log_id", ""),
        data.get("error", ""),
        int(data.get("seed", 0)),
        *_results(data.get("summary", "")),
        rules_json=data.get("rules", ""),
        think_ms=int(data.get("think_ms", 0)),
    )


def _results(summary: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(totals, winners, faults by seat) from a log summary ('' before the match finished)."""
    if not summary:
        return (), (), ()
    parsed = json.loads(summary)
    return tuple(parsed["totals"]), tuple(parsed["winners"]), tuple(parsed.get("faults", ()))
