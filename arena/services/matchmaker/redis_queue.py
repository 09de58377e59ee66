"""Queue and match operations of ``RedisStore``: tickets, atomic table claims, match lifecycle."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import redis

from arena.ladder.keys import Keys, stream_entries, text
from arena.ladder.matchlog import encode, summarize
from arena.ladder.ratings import MODEL
from arena.services.matchmaker import scripts
from arena.services.matchmaker.forming import Ticket
from arena.services.matchmaker.model import Agent, Ladder, MatchInfo
from arena.services.matchmaker.store import NotFound, StoreError
from arena.workers.routing import queue_for

PRESENCE_GRACE_S = 10.0  # a connected agent may join the queue this long before its gateway stream is up


def _now_ms() -> int:
    return int(time.time() * 1000)


class QueueOps:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys
        self._snapshot = client.register_script(scripts.SNAPSHOT)
        self._claim = client.register_script(scripts.CLAIM)
        self._join = client.register_script(scripts.JOIN)
        self._start = client.register_script(scripts.START)
        self._renew = client.register_script(scripts.RENEW)
        self._finish = client.register_script(scripts.FINISH)
        self._fail = client.register_script(scripts.FAIL)

    if TYPE_CHECKING:  # agents and ladders: RedisStore, which mixes these operations in, supplies them
        def get_ladder(self, name: str) -> Ladder: ...
        def get_agent(self, agent_id: str) -> Agent: ...
        def get_agents(self, agent_ids: Iterable[str]) -> dict[str, Agent]: ...

    # queue ----------------------------------------------------------------------------------
    def join(self, ladder: str, agent_id: str, lease_s: float | None, enroll: bool = False) -> float:
        """Queue (or renew) the agent's ticket; returns its enqueue time in ms. ``lease_s=None``:
        the ticket does not expire (built-in agents)."""
        self.get_ladder(ladder)
        agent = self.get_agent(agent_id)
        if agent.house:
            raise StoreError(f"house agent {agent_id!r} fills tables; it does not queue", "agent_id")
        lease_ms = 0 if lease_s is None else max(1, int(lease_s * 1000))
        now = _now_ms()
        value = f"g:{now}" if agent.kind == "connected" else str(now)
        args: list[str | int] = [self.keys.prefix, ladder, agent_id, now, lease_ms, int(enroll), value]
        return float(self._join(args=args))

    def leave(self, ladder: str, agent_id: str) -> bool:
        with self.client.pipeline() as pipe:
            pipe.delete(self.keys.ticket(ladder, agent_id))
            pipe.zrem(self.keys.queue(ladder), agent_id)
            pipe.srem(self.keys.enrolled(ladder), agent_id)
            removed = pipe.execute()
        return bool(removed[0] or removed[1])

    def has_ticket(self, ladder: str, agent_id: str) -> bool:
        return bool(self.client.exists(self.keys.ticket(ladder, agent_id)))

    def busy_match(self, agent_id: str) -> str:
        """The match the agent sits at now, or ''."""
        match_id = self.client.get(self.keys.busy(agent_id))
        return text(match_id) if match_id else ""

    def last_seated_id(self, agent_id: str) -> str:
        """Where to start reading ``seated_since``: the newest seating so far, or the beginning."""
        newest = stream_entries(self.client.xrevrange(self.keys.seated(agent_id), count=1))
        return newest[0][0] if newest else "0-0"

    def seated_since(self, agent_id: str, after: str) -> list[tuple[str, str, int]]:
        """(stream id, match id, seat) of each table the agent was seated at after ``after``."""
        entries = stream_entries(self.client.xrange(self.keys.seated(agent_id), min=f"({after}", count=100))
        return [(entry_id, text(fields[b"match"]), int(fields[b"seat"])) for entry_id, fields in entries]

    def queued(self, ladder: str) -> int:
        return int(self.client.zcard(self.keys.queue(ladder)))

    def snapshot(self, ladder: str, now_ms: int, presence_grace_s: float = PRESENCE_GRACE_S) -> list[Ticket]:
        flat = self._snapshot(args=[self.keys.prefix, ladder, now_ms, int(presence_grace_s * 1000)])
        tickets = []
        for i in range(0, len(flat), 4):
            rating = json.loads(flat[i + 2]) if flat[i + 2] else (MODEL.mu, MODEL.sigma)
            waited = max(0.0, (now_ms - float(flat[i + 1])) / 1000)
            games = json.loads(flat[i + 3])[0] if flat[i + 3] else 0
            tickets.append(Ticket(text(flat[i]), float(rating[0]), games, waited))
        return tickets

    def claim(self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int) -> list[str | None]:
        """Form the tables whose agents are all still free; ``tables[i]`` lists agent ids (queued
        agents and house bots). Returns the new match id, or None, per table."""
        return [claimed[0] if claimed else None for claimed in self.claim_queued(ladder, tables, now_ms)]

    def claim_queued(
        self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int
    ) -> list[tuple[str, str] | None]:
        """``claim``, giving (match id, Celery queue) for each table formed."""
        if not tables:
            return []
        agents = self.get_agents(agent for table in tables for agent in table)
        specs = {agent_id: agent.seat_spec() | ({"house": True} if agent.house else {})
                 for agent_id, agent in agents.items()}  # fmt: skip
        payload: list[dict[str, Any]] = []  # one JSON object per table, for the claim script
        for table in tables:
            seats = [specs[agent_id] for agent_id in table]
            queued = [seat["agent_id"] for seat in seats if not seat.get("house")]
            payload.append({"agents": queued, "seats": seats, "queue": queue_for(seats)})
        by_queue: dict[str, list[int]] = {}
        for index, formed in enumerate(payload):
            by_queue.setdefault(formed["queue"], []).append(index)
        result: list[tuple[str, str] | None] = [None] * len(payload)
        for celery_queue, indices in by_queue.items():
            chunk = json.dumps([payload[i] for i in indices])
            ids = self._claim(args=[self.keys.prefix, ladder, now_ms, celery_queue, chunk])
            for index, match_id in zip(indices, ids, strict=True):
                result[index] = (text(match_id), celery_queue) if match_id else None
        return result

    # matches --------------------------------------------------------------------------------
    def start_match(self, match_id: str, runner: str, lease_s: float) -> str:
        """'run' (the caller holds the lease now), 'busy' (another live runner holds it),
        'finished', 'failed' or 'missing'."""
        return self.start_match_info(match_id, runner, lease_s)[0]

    def start_match_info(self, match_id: str, runner: str, lease_s: float) -> tuple[str, MatchInfo | None]:
        """``start_match``, with the match as stored once started when the status is 'run'."""
        args: list[str | int] = [self.keys.prefix, match_id, runner, int(lease_s * 1000), _now_ms()]
        reply = self._start(args=args)
        status = text(reply[0])
        if status != "run":
            return status, None
        flat = reply[1]
        return status, _match_info(dict(zip(flat[::2], flat[1::2], strict=True)))

    def renew_match(self, match_id: str, runner: str, lease_s: float) -> bool:
        keys = [self.keys.match_lease(match_id)]
        return bool(self._renew(keys=keys, args=[runner, int(lease_s * 1000)]))

    def finish_match(self, match_id: str, record: dict[str, Any], info: MatchInfo | None = None) -> tuple[bool, str]:
        """Store the record and log the match once; returns (this call was the first, log id)."""
        info = info or self.get_match(match_id)
        summary = summarize(record, info.ladder, [seat["agent_id"] for seat in info.seats])
        args: list[str | int] = [self.keys.prefix, match_id, json.dumps(record), encode(summary), _now_ms()]
        outcome, log_id = self._finish(args=args)
        if text(outcome) == "missing":
            raise NotFound(f"no match {match_id!r}", "match_id")
        return text(outcome) == "first", text(log_id)

    def fail_match(self, match_id: str, error: str) -> bool:
        return bool(self._fail(args=[self.keys.prefix, match_id, error[:500], _now_ms()]))

    def mark_dispatched(self, match_id: str) -> None:
        self.client.hset(self.keys.match(match_id), "dispatched_ms", _now_ms())

    def get_match(self, match_id: str) -> MatchInfo:
        raw = self.client.hgetall(self.keys.match(match_id))
        if not raw:
            raise NotFound(f"no match {match_id!r}", "match_id")
        return _match_info(raw)

    def dispatched_ms(self, match_id: str) -> int:
        return int(self.client.hget(self.keys.match(match_id), "dispatched_ms") or 0)

    def lease_alive(self, match_id: str) -> bool:
        return bool(self.client.exists(self.keys.match_lease(match_id)))

    def get_record(self, match_id: str) -> dict[str, Any]:
        raw = self.client.get(self.keys.record(match_id))
        if raw is None:
            self.get_match(match_id)  # NotFound for an unknown id
            raise NotFound(f"match {match_id!r} has no record yet (not finished)", "match_id")
        return dict(json.loads(raw))

    def list_matches(self, ladder: str, agent_id: str, offset: int, limit: int) -> list[MatchInfo]:
        """Finished matches, newest first: of one agent when ``agent_id`` is given."""
        if agent_id:
            ids = [text(m) for m in self.client.lrange(self.keys.agent_matches(agent_id), offset, offset + limit - 1)]
            matches = [self.get_match(m) for m in ids]
            return [m for m in matches if not ladder or m.ladder == ladder]
        entries = stream_entries(self.client.xrevrange(self.keys.log(ladder), count=offset + limit))[offset:]
        return [self.get_match(text(fields[b"match"])) for _, fields in entries]

    def active_matches(self) -> list[str]:
        return sorted(text(m) for m in self.client.smembers(self.keys.active))


def _match_info(raw: Mapping[bytes | str, bytes | str]) -> MatchInfo:
    data = {text(k): text(v) for k, v in raw.items()}
    return MatchInfo(
        data["match_id"], data["ladder"], data["state"], json.loads(data["seats"]), data["queue"],
        int(data["created_ms"]), int(data.get("started_ms", 0)), int(data.get("finished_ms", 0)),
        int(data.get("attempts", 0)), data.get("log_id", ""), data.get("error", ""),
    )  # fmt: skip
