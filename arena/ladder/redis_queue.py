"""``QueueStore``: the ``RedisStore`` part over tickets and table forming (the queue, who sits
where, the snapshot the forming loop reads and the claim of the tables it forms)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from arena.clock import now_ms
from arena.keys import stream_entries, text
from arena.ladder.forming import Ticket
from arena.ladder.model import Ladder
from arena.ladder.ratings import MODEL
from arena.ladder.redis_base import StoreBase
from arena.ladder.store import NotFound, PermissionDenied, Revoked, shown
from ohell.errors import OhHellError
from ohell.rules import Rules
from ohell.schedule import hand_sizes

GONE = -1  # JOIN's answer for a ladder deleted since it was read
CLOSED = -2  # JOIN's answer for a self-registered agent on a ladder made host-only since it was read
PRESENCE_GRACE_S = 10.0  # a connected agent may join the queue this long before its gateway stream is up


class QueueStore(StoreBase):
    """Tickets: join, leave, the queue's snapshot, claiming tables, where agents were seated."""

    def _open_ladder_names(self, shown: int = 20) -> str:
        """The ladders a self-registered agent may queue on, for its refusal (the first ``shown``)."""
        names = sorted(ladder.name for ladder in self.list_ladders() if ladder.entry == "open")
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        return (", ".join(names[:shown]) + more) if names else "none now"

    def _host_only(self, ladder: str) -> PermissionDenied:
        return PermissionDenied(
            f"ladder {ladder!r} admits only agents the host registered; this agent registered itself, so it"
            f" queues only on open ladders ({self._open_ladder_names()})",
            "ladder",
        )

    def join(self, ladder: str, agent_id: str, lease_s: float | None, enroll: bool = False) -> float:
        """Queue (or renew) the agent's ticket; returns its enqueue time in ms. ``lease_s=None``:
        the ticket does not expire (built-in agents)."""
        definition = self.get_ladder(ladder)
        agent = self.get_agent(agent_id)
        if agent.house:
            raise PermissionDenied(f"house agent {agent_id!r} fills tables; it does not queue", "agent_id")
        if agent.self_registered and definition.entry != "open":
            raise self._host_only(ladder)
        lease_ms = 0 if lease_s is None else max(1, int(lease_s * 1000))
        now = now_ms()
        value = f"g:{now}" if agent.kind == "connected" else str(now)
        args: list[str | int] = [self.keys.prefix, ladder, agent_id, now, lease_ms, int(enroll), value]
        queued_at = self._join(args=[*args, int(agent.self_registered)])
        if queued_at == GONE:
            raise NotFound(f"no ladder {shown(ladder)}", "ladder")
        if queued_at == CLOSED:
            raise self._host_only(ladder)
        if queued_at is None:
            raise Revoked(
                f"agent_id: the token of {agent_id!r} was revoked (rotate it to let the agent play again)", "agent_id"
            )
        return float(queued_at)

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

    def wait_for_requeue(self, timeout_s: float) -> bool:
        """Block until a finished match puts enrolled agents back in a queue (True), at most
        ``timeout_s`` (False): the forming loop's wait between rounds. Redis 6.2 ends a blocking wait on
        its own clock (about every 100 ms) and read a 1 ms timeout as "forever" (measured on 6.2.14),
        so a timeout under 10 ms only looks, without waiting."""
        if timeout_s < 0.01:
            return self.client.lpop(self.keys.forming_wake) is not None
        return self.client.blpop([self.keys.forming_wake], timeout=timeout_s) is not None

    def builtin_tasks_waiting(self) -> int:
        """Tasks waiting in the broker for the built-in queue (kombu's Redis transport keeps a
        queue's messages in a list named after it; tasks taken by a worker are not counted)."""
        return int(self.client.llen(self.queues.builtin))

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

    def claim(
        self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int, definition: Ladder | None = None
    ) -> list[str | None]:
        """Form the tables whose agents are all still free; ``tables[i]`` lists agent ids (queued
        agents and house bots). Returns the new match id, or None, per table."""
        claimed = self.claim_queued(ladder, tables, now_ms, definition)
        return [match[0] if match else None for match in claimed]

    def claim_queued(
        self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int, definition: Ladder | None = None
    ) -> list[tuple[str, str] | None]:
        """``claim``, giving (match id, Celery queue) for each table formed. Each match keeps the rules
        and think time of ``definition``, the ladder's definition the tables were formed by (default:
        the stored one, read now); a table of a size those rules cannot deal is not formed."""
        if not tables:
            return []
        definition = definition or self.get_ladder(ladder)
        rules = definition.rules()
        agents = self.get_agents(agent for table in tables for agent in table)
        specs = {agent_id: agent.seat_spec() for agent_id, agent in agents.items()}
        payload: list[dict[str, Any]] = []  # one JSON object per table, for the claim script
        playable: list[int] = []
        for index, table in enumerate(tables):
            if not _deals(rules, len(table)):
                continue
            seats = [specs[agent_id] for agent_id in table]
            queued = [seat.agent_id for seat in seats if not seat.house]
            playable.append(index)
            payload.append(
                {
                    "agents": queued,
                    "seats": [seat.to_dict() for seat in seats],
                    "queue": self.queues.for_seats(seats),
                    "seed": str(secrets.randbits(63)),  # the deals' secret: never derived from public ids
                }
            )
        by_queue: dict[str, list[int]] = {}
        for index, formed in enumerate(payload):
            by_queue.setdefault(formed["queue"], []).append(index)
        rules_json = json.dumps(rules.to_dict(), separators=(",", ":"))
        result: list[tuple[str, str] | None] = [None] * len(tables)
        for celery_queue, indices in by_queue.items():
            chunk = json.dumps([payload[i] for i in indices])
            args: list[str | int] = [
                self.keys.prefix,
                ladder,
                now_ms,
                celery_queue,
                rules_json,
                definition.think_ms,
                chunk,
            ]
            for index, match_id in zip(indices, self._claim(args=args), strict=True):
                result[playable[index]] = (text(match_id), celery_queue) if match_id else None
        return result


def _deals(rules: Rules, seats: int) -> bool:
    """Whether ``rules`` can deal a game of ``seats`` players."""
    try:
        hand_sizes(rules, seats)
    except OhHellError:
        return False
    return True
