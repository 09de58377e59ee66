"""``RedisStore``: the ladder's store on Redis 6.2 (keyspace in ``arena.keys``, scripts in ``arena.ladder.scripts``)."""

from __future__ import annotations

import json
import re
import secrets
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import redis
from redis.typing import EncodableT, FieldT

from arena.keys import Keys, stream_entries, text, token_hash
from arena.ladder import scripts
from arena.ladder.forming import HouseBot, Ticket
from arena.ladder.limits import MAX_LADDERS, check_ladder
from arena.ladder.matchlog import encode, summarize
from arena.ladder.model import AGENT_KINDS, Agent, Ladder, MatchInfo, Standing, now_ms
from arena.ladder.ratings import MODEL, STAT_FIELDS, WIN_SHARE, catch_up, rebuild
from arena.ladder.routing import Queues
from arena.ladder.store import (
    AlreadyExists,
    InUse,
    LimitReached,
    NotFound,
    PermissionDenied,
    StoreError,
    Unauthenticated,
)
from arena.play.specs import SeatSpec
from arena.redis_client import retrying_client
from ohell.bots import BOT_FACTORIES

AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


PRESENCE_GRACE_S = 10.0  # a connected agent may join the queue this long before its gateway stream is up


ARCHIVE_REQUEST_MS = 500  # finished matches ask for an archive run at most this often
RECENT_SCAN = 1000  # list_matches looks at this many of the newest unarchived matches at most
RECORD_COMPRESSION = 3  # zlib level of records in Redis (and so in the archive): 24.5 KB -> ~4.9 KB in ~0.17 ms
# A record is a tree of dicts, lists and scalars built by ohell.record: no cycle check (a third of
# json.dumps's time on a full classic game's record).
RECORD_JSON = json.JSONEncoder(check_circular=False)


@dataclass(frozen=True)
class Finished:
    """A match played to its record, for ``finish_matches``; ``started_ms`` is when its play
    began (0: keep the time the start script wrote, which for a batch is when the batch began)."""

    info: MatchInfo
    record: dict[str, Any]
    started_ms: int = 0


@dataclass(frozen=True)
class ArchiveItem:
    """A finished match as Redis holds it for the archive: ``record`` is zlib-compressed JSON of
    ``record_bytes`` bytes; ``rating`` is '' until the match is rated; ``summary`` its log entry."""

    info: MatchInfo
    record: bytes
    record_bytes: int
    rating: str
    summary: str


class RedisStore:
    """The store of agents, ladders, tickets, matches and ratings on Redis 6.2: the one implementation
    (its guarantees: ``arena.ladder.store``)."""

    def __init__(self, client: redis.Redis, keys: Keys | None = None) -> None:
        self.client = client
        self.keys = keys or Keys()
        self.queues = Queues(self.keys.prefix)
        self._snapshot = client.register_script(Keys.lua(scripts.SNAPSHOT))
        self._claim = client.register_script(Keys.lua(scripts.CLAIM))
        self._join = client.register_script(Keys.lua(scripts.JOIN))
        self._start = client.register_script(Keys.lua(scripts.START))
        self._renew = client.register_script(scripts.RENEW)
        self._finish = client.register_script(Keys.lua(scripts.FINISH))
        self._fail = client.register_script(Keys.lua(scripts.FAIL))
        self._forget = client.register_script(Keys.lua(scripts.FORGET))
        self._hold = client.register_script(Keys.lua(scripts.HOLD))
        self._release_if_held = client.register_script(scripts.RELEASE_IF_HELD)

    @classmethod
    def connect(cls, redis_url: str, keys: Keys | None = None, retries: int = 10) -> RedisStore:
        """A store on a retrying client (see ``arena.redis_client``)."""
        return cls(retrying_client(redis_url, retries, health_check_interval=10), keys)

    # agents ---------------------------------------------------------------------------------
    def register_agent(
        self,
        name: str,
        kind: str,
        version: str = "",
        bot: str = "",
        endpoint: str = "",
        house: bool = False,
        self_registered: bool = False,
    ) -> tuple[Agent, str]:
        if not AGENT_NAME.match(name):
            raise StoreError(f"name {name!r} must be 1-64 letters, digits, '_', '.', '-'", "name")
        if kind not in AGENT_KINDS:
            raise StoreError(f"kind {kind!r} must be one of {', '.join(AGENT_KINDS)}", "kind")
        if kind == "builtin" and bot not in BOT_FACTORIES:
            raise StoreError(f"bot {bot!r} is not a built-in bot ({', '.join(sorted(BOT_FACTORIES))})", "bot")
        if self_registered and kind != "connected":
            raise PermissionDenied(f"kind {kind!r}: a self-registered agent can only be connected", "kind")
        if kind == "endpoint" and (len(endpoint) > 255 or not re.match(r"^[\w.\-\[\]:]+:\d{1,5}$", endpoint)):
            raise StoreError(f"endpoint {endpoint!r} must look like host:port", "endpoint")
        if len(version) > 64:
            raise StoreError("version must be at most 64 characters", "version")
        number = self.client.incr(self.keys.agent_seq)
        token = secrets.token_urlsafe(24)
        agent = Agent(
            f"a{number}",
            name,
            kind,
            version,
            bot if kind == "builtin" else "",
            endpoint if kind == "endpoint" else "",
            house,
            now_ms(),
            self_registered,
            token if kind == "endpoint" else "",
        )
        if not self.client.hsetnx(self.keys.agent_names, name, agent.agent_id):
            raise AlreadyExists(f"an agent named {name!r} exists", "name")
        fields: dict[FieldT, EncodableT] = {
            "agent_id": agent.agent_id,
            "name": name,
            "kind": kind,
            "version": version,
            "bot": agent.bot,
            "endpoint": agent.endpoint,
            "house": int(house),
            "created_ms": agent.created_ms,
            "token_sha": token_hash(token),
            "self_registered": int(self_registered),
            "dial_token": agent.dial_token,
        }
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

    def open_ladder_exists(self) -> bool:
        """Whether some ladder lets self-registered agents in (open self-registration)."""
        return any(ladder.entry == "open" for ladder in self.list_ladders())

    def set_token(self, agent_id: str, rotate: bool) -> str | None:
        """Replace (``rotate``) or remove the agent's token; returns the new token, or for a
        revocation the old hash (None when it had no token). The old token stops working at once."""
        agent = self.get_agent(agent_id)
        old = self.client.hget(self.keys.agent(agent_id), "token_sha")
        token = secrets.token_urlsafe(24) if rotate else None
        with self.client.pipeline() as pipe:
            if old:
                pipe.hdel(self.keys.agent_tokens, text(old))
            if token is not None:
                pipe.hset(self.keys.agent_tokens, token_hash(token), agent_id)
                fields: dict[FieldT, EncodableT] = {"token_sha": token_hash(token)}
                if agent.kind == "endpoint":
                    fields["dial_token"] = token
                pipe.hset(self.keys.agent(agent_id), mapping=fields)
            else:
                pipe.hset(self.keys.agent(agent_id), "token_sha", "")
            pipe.execute()
        return token if rotate else (text(old) if old else None)

    def list_agents(self, offset: int, limit: int) -> tuple[list[Agent], bool]:
        """Agents in registration order from the ``offset``-th; and whether more follow."""
        last = int(self.client.get(self.keys.agent_seq) or 0)
        numbers = range(offset + 1, min(last, offset + limit) + 1)
        with self.client.pipeline(transaction=False) as pipe:
            for number in numbers:
                pipe.hgetall(self.keys.agent(f"a{number}"))
            found = pipe.execute()
        return [_agent(raw) for raw in found if raw], offset + limit < last

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
        check_ladder(ladder)
        if self.client.scard(self.keys.ladders) >= MAX_LADDERS:
            raise LimitReached(f"there are {MAX_LADDERS} ladders already (the limit): delete one first", "ladder")
        if not self.client.set(self.keys.ladder(ladder.name), ladder.to_json(), nx=True):
            raise AlreadyExists(f"ladder {ladder.name!r} exists", "name")
        self.client.sadd(self.keys.ladders, ladder.name)
        self._house(ladder)
        return ladder

    def _house(self, ladder: Ladder) -> None:
        house_ids = []
        for bot in ladder.house_bots:  # seats - 1 of each, so a lone agent can fill a table with one kind
            for copy in range(1, ladder.seats):
                name = f"house-{bot}-{copy}"
                try:
                    house_ids.append(self.agent_by_name(name).agent_id)
                except NotFound:
                    house_ids.append(self.register_agent(name, "builtin", bot=bot, house=True)[0].agent_id)
        with self.client.pipeline() as pipe:
            pipe.delete(self.keys.house(ladder.name))
            if house_ids:
                pipe.rpush(self.keys.house(ladder.name), *house_ids)
            pipe.execute()

    def update_ladder(self, ladder: Ladder) -> Ladder:
        """Replace a ladder's definition (its paused flag stays); matches in play are not changed."""
        current = self.get_ladder(ladder.name)
        ladder = replace(ladder, paused=current.paused)
        check_ladder(ladder)
        self.client.set(self.keys.ladder(ladder.name), ladder.to_json(), xx=True)
        self._house(ladder)
        return ladder

    def set_paused(self, name: str, paused: bool) -> Ladder:
        ladder = replace(self.get_ladder(name), paused=paused)
        self.client.set(self.keys.ladder(name), ladder.to_json(), xx=True)
        return ladder

    def delete_ladder(self, name: str) -> None:
        """Remove a ladder's definition, queue and tickets; its log, records and ratings stay."""
        self.get_ladder(name)
        playing = [m for m in self.active_matches() if m.rsplit("-", 1)[0] == name]
        if playing:
            raise InUse(f"ladder {name!r} has {len(playing)} match(es) in play: pause it and retry", "name")
        members = cast(list[bytes | str], self.client.zrange(self.keys.queue(name), 0, -1))
        queued = [text(a) for a in members]
        with self.client.pipeline() as pipe:
            pipe.srem(self.keys.ladders, name)
            pipe.delete(self.keys.ladder(name), self.keys.queue(name), self.keys.enrolled(name), self.keys.house(name))
            for agent_id in queued:
                pipe.delete(self.keys.ticket(name, agent_id))
            pipe.execute()

    def get_ladder(self, name: str) -> Ladder:
        raw = self.client.get(self.keys.ladder(name))
        if raw is None:
            raise NotFound(f"no ladder {name!r}", "ladder")
        return Ladder.from_json(raw)

    def list_ladders(self) -> list[Ladder]:
        names = sorted(text(name) for name in self.client.smembers(self.keys.ladders))
        found = self.client.mget([self.keys.ladder(name) for name in names]) if names else []
        return [Ladder.from_json(raw) for raw in found if raw is not None]

    def waiting_ladders(self, ladders: Sequence[Ladder]) -> list[Ladder]:
        """The ladders among ``ladders`` that have a ticket queued (one round trip)."""
        with self.client.pipeline(transaction=False) as pipe:
            for ladder in ladders:
                pipe.zcard(self.keys.queue(ladder.name))
            counts = pipe.execute()
        return [ladder for ladder, count in zip(ladders, counts, strict=True) if count]

    def house_bots(self, ladder: str) -> list[HouseBot]:
        ids = [text(agent) for agent in self.client.lrange(self.keys.house(ladder), 0, -1)]
        ratings = self.client.hmget(self.keys.ratings(ladder), ids) if ids else []
        pairs = zip(ids, ratings, strict=True)
        return [HouseBot(agent, json.loads(raw)[0] if raw else MODEL.mu) for agent, raw in pairs]

    # ratings --------------------------------------------------------------------------------
    def catch_up_ratings(self, ladder: str) -> int:
        """Apply the ladder's new log entries to its ratings, exactly once (``arena.ladder.ratings``)."""
        return catch_up(self.client, self.keys, ladder)

    def rebuild_ratings(self, ladder: str, archived: Iterable[tuple[str, dict[str, Any]]] = ()) -> int:
        """Recompute the ladder's ratings and statistics from its whole log (and the archive's
        (log id, summary) pairs when given); returns matches replayed."""
        return rebuild(self.client, self.keys, ladder, archived)

    def ratings_behind(self, ladder: str) -> bool:
        """Whether the ladder's log holds a match its ratings have not applied yet."""
        last = stream_entries(self.client.xrevrange(self.keys.log(ladder), count=1))
        if not last:
            return False
        rated = self.client.get(self.keys.rated(ladder))
        return rated is None or text(rated) != last[0][0]

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

    # queue ----------------------------------------------------------------------------------
    def join(self, ladder: str, agent_id: str, lease_s: float | None, enroll: bool = False) -> float:
        """Queue (or renew) the agent's ticket; returns its enqueue time in ms. ``lease_s=None``:
        the ticket does not expire (built-in agents)."""
        definition = self.get_ladder(ladder)
        agent = self.get_agent(agent_id)
        if agent.house:
            raise PermissionDenied(f"house agent {agent_id!r} fills tables; it does not queue", "agent_id")
        if agent.self_registered and definition.entry != "open":
            raise PermissionDenied(f"ladder {ladder!r} admits only agents the host registered", "agent_id")
        lease_ms = 0 if lease_s is None else max(1, int(lease_s * 1000))
        now = now_ms()
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

    def wait_for_requeue(self, timeout_s: float) -> bool:
        """Block until a finished match puts enrolled agents back in a queue (True), at most
        ``timeout_s`` (False): the forming loop's wait between rounds."""
        return self.client.blpop([self.keys.forming_wake], timeout=timeout_s) is not None

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

    def claim_queued(self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int) -> list[tuple[str, str] | None]:
        """``claim``, giving (match id, Celery queue) for each table formed."""
        if not tables:
            return []
        agents = self.get_agents(agent for table in tables for agent in table)
        specs = {agent_id: agent.seat_spec() for agent_id, agent in agents.items()}
        payload: list[dict[str, Any]] = []  # one JSON object per table, for the claim script
        for table in tables:
            seats = [specs[agent_id] for agent_id in table]
            queued = [seat.agent_id for seat in seats if not seat.house]
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
        return self.start_matches([match_id], runner, lease_s)[0]

    def start_matches(
        self, match_ids: Sequence[str], runner: str, lease_s: float
    ) -> list[tuple[str, MatchInfo | None]]:
        """Start several matches for one runner in one script: (status, match as stored when the
        status is 'run') per match, in order. Each match started is leased to ``runner`` at once."""
        args: list[str | int] = [self.keys.prefix, runner, int(lease_s * 1000), now_ms(), *match_ids]
        started: list[tuple[str, MatchInfo | None]] = []
        for reply in self._start(args=args):
            status = text(reply[0])
            flat = reply[1] if status == "run" else None
            started.append((status, _match_info(dict(zip(flat[::2], flat[1::2], strict=True))) if flat else None))
        return started

    def renew_match(self, match_id: str, runner: str, lease_s: float) -> bool:
        keys = [self.keys.match_lease(match_id)]
        return bool(self._renew(keys=keys, args=[runner, int(lease_s * 1000)]))

    def release_match(self, match_id: str, runner: str) -> None:
        """Give up ``runner``'s lease on an unfinished match, so another runner may start it now."""
        self._release_if_held(keys=[self.keys.match_lease(match_id)], args=[runner])

    def finish_match(self, match_id: str, record: dict[str, Any], info: MatchInfo | None = None) -> tuple[bool, str]:
        """Store the record and log the match once; returns (this call was the first, log id)."""
        ((outcome, log_id),) = self.finish_matches([Finished(info or self.get_match(match_id), record)])
        if outcome == "missing":
            raise NotFound(f"no match {match_id!r}", "match_id")
        return outcome == "first", log_id

    def finish_matches(self, finished: Sequence[Finished]) -> list[tuple[str, str]]:
        """Store the records and log the matches, each once, in one script: (outcome, log id) per
        match, outcome 'first' (this call logged it), 'duplicate', 'failed' or 'missing'."""
        args: list[str | int | bytes] = [self.keys.prefix, now_ms()]
        for done in finished:
            info = done.info
            summary = summarize(done.record, info.ladder, [seat.agent_id for seat in info.seats])
            raw = RECORD_JSON.encode(done.record).encode()
            blob = zlib.compress(raw, RECORD_COMPRESSION)
            args += [info.match_id, blob, encode(summary), len(raw), done.started_ms or ""]
        return [(text(outcome), text(log_id)) for outcome, log_id in self._finish(args=args)] if finished else []

    def fail_match(self, match_id: str, error: str) -> bool:
        return bool(self._fail(args=[self.keys.prefix, match_id, error[:500], now_ms()]))

    def ensure_seed(self, match_id: str) -> int:
        """The match's secret seed; one is drawn now for a match claimed before seeds were stored."""
        self.client.hsetnx(self.keys.match(match_id), "seed", secrets.randbits(63))
        return int(self.client.hget(self.keys.match(match_id), "seed") or 0)

    def mark_dispatched(self, match_id: str) -> None:
        self.client.hset(self.keys.match(match_id), "dispatched_ms", now_ms())

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
        return dict(json.loads(zlib.decompress(cast(bytes, raw))))

    def list_matches(self, ladder: str, agent_id: str, offset: int, limit: int) -> list[MatchInfo]:
        """Finished matches the archive does not hold yet, newest first, among the newest RECENT_SCAN of
        them: of a ladder and/or an agent (the archive answers for the others: ``arena.archive.queries``)."""
        newest = cast(list[bytes], self.client.zrevrange(self.keys.unarchived, 0, RECENT_SCAN - 1))
        ids = [text(m) for m in newest]
        found = []
        for match_id in ids:
            if ladder and match_id.rpartition("-")[0] != ladder:
                continue
            try:
                info = self.get_match(match_id)
            except NotFound:  # archived meanwhile
                continue
            if not agent_id or any(seat.agent_id == agent_id for seat in info.seats):
                found.append(info)
            if len(found) >= offset + limit:
                break
        return found[offset:]

    # archive backlog (arena.ladder.archiving moves finished matches to the SQL archive) -------
    def archive_backlog(self) -> int:
        """Finished matches the archive does not hold yet."""
        return int(self.client.zcard(self.keys.unarchived))

    def oldest_unarchived_ms(self) -> int:
        """When the oldest match of the backlog finished (0: none)."""
        oldest = self.client.zrange(self.keys.unarchived, 0, 0, withscores=True)
        return int(oldest[0][1]) if oldest else 0

    def unarchived(self, limit: int) -> list[str]:
        """The oldest ``limit`` matches of the archive's backlog."""
        return [text(m) for m in cast(list[bytes], self.client.zrange(self.keys.unarchived, 0, limit - 1))]

    def for_archive(self, match_ids: Sequence[str]) -> list[ArchiveItem | None]:
        """What the archive needs of each match, one round trip; None when its hash is gone
        (archived and forgotten already)."""
        with self.client.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hgetall(self.keys.match(match_id))
                pipe.get(self.keys.record(match_id))
                pipe.hget(self.keys.rating_changes(match_id.rpartition("-")[0]), match_id)
            replies = pipe.execute()
        out: list[ArchiveItem | None] = []
        for raw, record, change in zip(replies[::3], replies[1::3], replies[2::3], strict=True):
            if not raw or b"seats" not in raw or record is None:
                out.append(None)
                continue
            rating, summary = text(change or b""), text(raw.get(b"summary", b""))
            out.append(ArchiveItem(_match_info(raw), record, int(raw.get(b"record_bytes", 0)), rating, summary))
        return out

    def forget_archived(self, match_ids: Sequence[str]) -> None:
        """Drop the record and hash of matches the archive holds (safe to repeat)."""
        if match_ids:
            self._forget(args=[self.keys.prefix, *match_ids])

    def hold(self, which: str, holder: str, ttl_s: float) -> bool:
        """Take or renew ``which`` ("archive_lock" or "archive_retry") for ``holder``; False if
        another holds it."""
        return bool(self._hold(args=[self.keys.prefix, which, holder, max(1, int(ttl_s * 1000))]))

    def release(self, which: str, holder: str) -> None:
        key = self.keys.archive_lock if which == "archive_lock" else self.keys.archive_retry
        self._release_if_held(keys=[key], args=[holder])

    def request_archive(self, every_ms: int = ARCHIVE_REQUEST_MS) -> bool:
        """True for the first caller in each ``every_ms``: it sends the archive task, so a busy
        ladder archives in batches (one run per window) rather than one run per match."""
        return bool(self.client.set(self.keys.archive_requested, 1, nx=True, px=every_ms))

    def archive_waiting(self) -> bool:
        """Whether an archive task is waiting for the database to come back."""
        return bool(self.client.exists(self.keys.archive_retry))

    def running_matches(self, ladder: str, agent_id: str) -> list[MatchInfo]:
        """Matches in play now (of one ladder and/or agent when given), by id."""
        matches = []
        for match_id in self.active_matches():
            raw = self.client.hgetall(self.keys.match(match_id))
            info = _match_info(raw) if raw else None
            if info is None or info.state not in ("queued", "running") or (ladder and info.ladder != ladder):
                continue
            if not agent_id or agent_id in (seat.agent_id for seat in info.seats):
                matches.append(info)
        return matches

    def active_matches(self) -> list[str]:
        return sorted(text(m) for m in self.client.smembers(self.keys.active))


def _agent(raw: dict[bytes, bytes]) -> Agent:
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
    )


def _match_info(raw: Mapping[bytes | str, bytes | str]) -> MatchInfo:
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
    )


def _results(summary: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(totals, winners, faults by seat) from a log summary ('' before the match finished)."""
    if not summary:
        return (), (), ()
    parsed = json.loads(summary)
    return tuple(parsed["totals"]), tuple(parsed["winners"]), tuple(parsed.get("faults", ()))
