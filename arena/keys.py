"""Every Redis key of every process, in one place. Every key starts with one configurable prefix
(default "ohell:"; ``OHELL_REDIS_PREFIX`` or ``--prefix``), so stacks with different prefixes share
one Redis without seeing each other. Python builds names with ``Keys``; the Lua scripts with the
functions of ``Keys.lua()``, rendered from the same templates.

    {p}agent:{id}              hash   an agent (name, kind, bot, version, endpoint, token_sha, house);
                                      token_sha "" once revoked, revoked_ms when (until a rotation)
    {p}agent-names             hash   name -> agent id (names are unique)
    {p}agent-names-alike       hash   a name's skeleton (lower case, look-alike letters folded) -> agent id:
                                      no name passes for another ('#indexed': the names before it indexed)
    {p}agent_tokens            hash   SHA-256 of a token -> agent id
    {p}agent-seq               string last agent number
    {p}self-registered         string agents registered without the host token (their cap: MAX_SELF_REGISTERED)
    {p}ladders                 set    ladder names
    {p}ladder:{l}              string the ladder definition (JSON)
    {p}house:{l}               list   house agent ids of a ladder
    {p}queue:{l}               zset   agent id -> enqueue time (ms): one ticket per agent per ladder
    {p}ticket:{l}:{id}         string the ticket's lease; expires when its holder stops renewing it
                                      (no TTL for built-in agents, which stay enrolled)
    {p}enrolled:{l}            set    built-in agents put back in the queue after each match
    {p}busy:{id}               string the match an agent sits at (so it never sits at two)
    {p}forming-wake            list   at most one entry: a finished match put enrolled agents back in a
                                      queue, so the forming loop runs now rather than at its next tick
    {p}seated:{id}             stream tables a connected or endpoint agent was seated at (match, seat)
    {p}match-seq               string last match number: the <n> of match id <ladder>-<n>, one counter for
                                      every ladder (ids stay unique, a re-created ladder's too); raised
                                      to the archive's highest <n> when the matchmaker starts and when
                                      the archive refuses a reused id (it only ever goes up)
    {p}match:{m}               hash   match state (queued|running|finished|failed), seats, times, and
                                      the rules and think_ms it was claimed with (UpdateLadder changes
                                      no claimed match); once finished its log summary, until archived
    {p}match-lease:{m}         string the runner holding the match; expires if it dies
    {p}active                  set    matches not finished yet (the recovery sweep reads it)
    {p}record:{m}              string the JSON match record of a finished match, until the archive has it
    {p}unarchived              zset   finished matches the SQL archive does not hold yet -> finished ms
                                      (the match hash and record are deleted once archived)
    {p}archive-refused         zset   finished matches the archive refused: it holds another match under their
                                      id (Redis lost match-seq) -> when refused (ms); their hash and
                                      record stay, for the host (docs/operations.md, "A reused match id")
    {p}archive-lock            string the archive task draining ``unarchived`` now (short TTL, renewed per batch)
    {p}archive-retry           string the one archive task waiting for the database (TTL: its back-off)
    {p}archive-requested       string an archive run was asked for in the last ARCHIVE_REQUEST_MS (debounce)
    {p}log:{l}                 stream the durable match log: one entry per finished match
    {p}rated:{l}               string stream id of the last log entry applied to the ratings
    {p}rating-changes:{l}      hash   match id -> JSON [[mu, sigma before, mu, sigma after] by seat], written
                                      with the ratings, deleted once the archive has the match
    {p}ratings:{l}             hash   agent id -> JSON [mu, sigma]
    {p}stats:{l}               hash   agent id -> JSON counts [games, hands, exact, faults, forfeits,
                                      win shares (x420), points] (arena.ladder.ratings.STAT_FIELDS)
    {p}board:{l}               zset   agent id -> ordinal (mu - 3 sigma)
    {p}agent:{id}:gateway      string the gateway holding the agent's stream (TTL PRESENCE_TTL_S)
    {p}gateway:{g}             pubsub RelayEnvelopes for the agents gateway g holds
    {p}host:{h}                pubsub actions and undeliverable notices for match host h
    {p}match:{m}:events        stream the match's public MatchEvents (field ``e``), for spectators
    {p}challenge:{m}           string reserves a challenge's match id (SET NX, TTL MATCH_EVENTS_TTL_S)
    {p}rate:{c}                string a caller's rate limit (GCRA theoretical arrival time, ms)
    {p}slots:{k}:{c}           zset   a caller's slots of kind k (challenge: in play, spectate: streams
                                      open) on every engine replica: lease id -> expiry ms; the
                                      holder renews its lease, an expired one frees its slot
    {p}challengeable:{id}      string the agent accepts challenges from others (TTL PRESENCE_TTL_S)
    {p}tourneys                set    tournament ids
    {p}tourney:{t}             hash   a tournament: spec (JSON), summary (JSON: the spec without its
                                      entrants, for lists), state (running|finished), round,
                                      tables, tables_done, created_ms, finished_ms
    {p}tourney-deals:{t}       hash   table id -> its deal sets (JSON); secret until the tournament ends
    {p}tourney-deals-new:{t}:{n} hash the deal sets of a tournament being created, sent in parts
                                      (TTL STAGED_DEALS_TTL_S); renamed to tourney-deals:{t} by the
                                      script that creates it, removed if the id is taken
    {p}tourney-tables:{t}      hash   table id -> JSON {round, entrants (indices), queue}
    {p}tourney-table:{t}:{x}   hash   one table's run: state (queued|running|finished), runner,
                                      attempts, started_ms, finished_ms, forfeits (JSON, decided once)
    {p}tourney-lease:{t}:{x}   string the runner holding the table; expires if it dies
    {p}tourney-games:{t}       hash   game id -> JSON result {table, unit, seats, scores, forfeited}
    {p}tourney-records:{t}     hash   game id -> JSON match record; secret until the tournament ends
    {p}tourney-log:{t}         stream one entry per finished table (exactly once)
    {p}tourney-away:{t}        hash   agent id -> JSON {name, since_ms, table}: a connected entrant that
                                      forfeited a table for being away (not online when its wait ended);
                                      its later tables forfeit it at once while it is away (cleared when
                                      a table starts with it online)
    {p}tourney-away-clears:{t} hash   agent id -> how many tables decided their forfeits with it online (each
                                      clears its mark): a table sets a mark only if this is unchanged since
                                      its wait's last look saw the entrant away
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"  # REDIS_URL when unset, for every process of the stack
DEFAULT_PREFIX = "ohell:"
# The agent ids the platform issues ("a<n>"). Look an id of another shape up nowhere: it could name
# another key ("a1:gateway" is agent a1's presence), whose type Redis would refuse (WRONGTYPE).
AGENT_ID = re.compile(r"^a[0-9]{1,18}$")
PREFIX_ENV = "OHELL_REDIS_PREFIX"

PRESENCE_TTL_S = 10  # an agent's presence key lives this long without a refresh
PRESENCE_REFRESH_S = 2  # also how soon presence is back after a Redis restart
MATCH_EVENTS_TTL_S = 24 * 3600
MATCH_EVENTS_MAXLEN = 20_000

# name -> key after the prefix; each "{}" is filled, in order, with the arguments of Keys.<name>(...).
TEMPLATES: dict[str, str] = {
    "agent": "agent:{}",
    "agent_names": "agent-names",
    "agent_names_alike": "agent-names-alike",
    "agent_tokens": "agent_tokens",
    "agent_seq": "agent-seq",
    "self_registered": "self-registered",
    "ladders": "ladders",
    "ladder": "ladder:{}",
    "house": "house:{}",
    "queue": "queue:{}",
    "ticket": "ticket:{}:{}",
    "enrolled": "enrolled:{}",
    "busy": "busy:{}",
    "forming_wake": "forming-wake",
    "seated": "seated:{}",
    "match_seq": "match-seq",
    "match": "match:{}",
    "match_lease": "match-lease:{}",
    "active": "active",
    "record": "record:{}",
    "unarchived": "unarchived",
    "archive_refused": "archive-refused",
    "archive_lock": "archive-lock",
    "archive_retry": "archive-retry",
    "archive_requested": "archive-requested",
    "log": "log:{}",
    "rated": "rated:{}",
    "rating_changes": "rating-changes:{}",
    "ratings": "ratings:{}",
    "stats": "stats:{}",
    "board": "board:{}",
    "agent_presence": "agent:{}:gateway",
    "gateway_channel": "gateway:{}",
    "host_channel": "host:{}",
    "match_events": "match:{}:events",
    "challenge_id": "challenge:{}",
    "rate_limit": "rate:{}",
    "slots": "slots:{}:{}",
    "challengeable": "challengeable:{}",
    "tourneys": "tourneys",
    "tourney": "tourney:{}",
    "tourney_deals": "tourney-deals:{}",
    "tourney_deals_new": "tourney-deals-new:{}:{}",
    "tourney_tables": "tourney-tables:{}",
    "tourney_table": "tourney-table:{}:{}",
    "tourney_lease": "tourney-lease:{}:{}",
    "tourney_games": "tourney-games:{}",
    "tourney_records": "tourney-records:{}",
    "tourney_log": "tourney-log:{}",
    "tourney_away": "tourney-away:{}",
    "tourney_away_clears": "tourney-away-clears:{}",
}

Fields = Mapping[bytes | str, bytes | str]  # the fields of a stream entry, as redis-py returns them
# An XRANGE / XREVRANGE reply as redis-py types it: ids and fields are optional there because
# XAUTOCLAIM and XREADGROUP report deleted entries that way (XRANGE never does).
StreamReply = Sequence[tuple[bytes | str | None, Fields | None]] | None


def text(value: bytes | str) -> str:
    """A Redis reply (bytes) as text."""
    return value.decode() if isinstance(value, bytes) else value


def stream_entries(reply: StreamReply) -> list[tuple[str, Fields]]:
    """An XRANGE / XREVRANGE reply as (entry id, fields), in the order Redis sent them."""
    return [(text(entry_id), fields) for entry_id, fields in reply or () if entry_id is not None and fields is not None]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _lua_function(name: str, template: str) -> str:
    parts = template.split("{}")
    args = [f"a{i}" for i in range(len(parts) - 1)]
    pieces = ["p"]
    for index, part in enumerate(parts):
        if part:
            pieces.append(repr(part))
        if index < len(args):
            pieces.append(args[index])
    return f"K.{name} = function({', '.join(['p', *args])}) return {' .. '.join(pieces)} end"


LUA_KEYS = "local K = {}\n" + "\n".join(_lua_function(name, template) for name, template in TEMPLATES.items()) + "\n"


@dataclass(frozen=True)
class Keys:
    """Key names under one prefix: ``Keys("x:").queue("l") == "x:queue:l"``."""

    prefix: str = DEFAULT_PREFIX

    @classmethod
    def from_env(cls) -> Keys:
        return cls(os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX)

    @staticmethod
    def lua(script: str) -> str:
        """``script`` with the key functions in front: ``K.queue(p, l)`` is ``Keys(p).queue(l)``."""
        return LUA_KEYS + script

    def _key(self, name: str, *parts: Any) -> str:
        return self.prefix + TEMPLATES[name].format(*parts)

    def agent(self, agent_id: str) -> str:
        return self._key("agent", agent_id)

    @property
    def agent_names(self) -> str:
        return self._key("agent_names")

    @property
    def agent_names_alike(self) -> str:
        """hash: an agent name's skeleton (arena.ladder.model.name_skeleton) -> its id: names are unique
        whatever their letter case and look-alike letters. (agent-names-folded, its lower-case-only
        predecessor, is no longer read.)"""
        return self._key("agent_names_alike")

    @property
    def agent_tokens(self) -> str:
        """hash: sha256(token) hex -> agent id; the store writes it, the gateway reads it."""
        return self._key("agent_tokens")

    @property
    def agent_seq(self) -> str:
        return self._key("agent_seq")

    @property
    def self_registered(self) -> str:
        """string: how many agents have registered themselves (open self-registration), against its cap."""
        return self._key("self_registered")

    @property
    def ladders(self) -> str:
        return self._key("ladders")

    def ladder(self, ladder: str) -> str:
        return self._key("ladder", ladder)

    def house(self, ladder: str) -> str:
        return self._key("house", ladder)

    def queue(self, ladder: str) -> str:
        return self._key("queue", ladder)

    def ticket(self, ladder: str, agent_id: str) -> str:
        return self._key("ticket", ladder, agent_id)

    def enrolled(self, ladder: str) -> str:
        return self._key("enrolled", ladder)

    def busy(self, agent_id: str) -> str:
        return self._key("busy", agent_id)

    @property
    def forming_wake(self) -> str:
        return self._key("forming_wake")

    def seated(self, agent_id: str) -> str:
        return self._key("seated", agent_id)

    @property
    def match_seq(self) -> str:
        return self._key("match_seq")

    def match(self, match_id: str) -> str:
        return self._key("match", match_id)

    def match_lease(self, match_id: str) -> str:
        return self._key("match_lease", match_id)

    @property
    def active(self) -> str:
        return self._key("active")

    def record(self, match_id: str) -> str:
        return self._key("record", match_id)

    @property
    def unarchived(self) -> str:
        return self._key("unarchived")

    @property
    def archive_refused(self) -> str:
        return self._key("archive_refused")

    @property
    def archive_lock(self) -> str:
        return self._key("archive_lock")

    @property
    def archive_retry(self) -> str:
        return self._key("archive_retry")

    @property
    def archive_requested(self) -> str:
        return self._key("archive_requested")

    def log(self, ladder: str) -> str:
        return self._key("log", ladder)

    def rated(self, ladder: str) -> str:
        return self._key("rated", ladder)

    def rating_changes(self, ladder: str) -> str:
        return self._key("rating_changes", ladder)

    def ratings(self, ladder: str) -> str:
        return self._key("ratings", ladder)

    def stats(self, ladder: str) -> str:
        return self._key("stats", ladder)

    def board(self, ladder: str) -> str:
        return self._key("board", ladder)

    def agent_presence(self, agent_id: str) -> str:
        return self._key("agent_presence", agent_id)

    def gateway_channel(self, gateway_id: str) -> str:
        return self._key("gateway_channel", gateway_id)

    def host_channel(self, host_id: str) -> str:
        return self._key("host_channel", host_id)

    def match_events(self, match_id: str) -> str:
        return self._key("match_events", match_id)

    def challenge_id(self, match_id: str) -> str:
        return self._key("challenge_id", match_id)

    def rate_limit(self, caller: str) -> str:
        """string: the rate-limit state of one caller (a token's hash, or the peer's address)."""
        return self._key("rate_limit", caller)

    def slots(self, kind: str, caller: str) -> str:
        """zset: lease id -> expiry ms, one per slot of ``kind`` the caller holds on any engine."""
        return self._key("slots", kind, caller)

    def challengeable(self, agent_id: str) -> str:
        """string: present while the agent's gateway stream says it accepts challenges from others."""
        return self._key("challengeable", agent_id)

    @property
    def tourneys(self) -> str:
        return self._key("tourneys")

    def tourney(self, tourney_id: str) -> str:
        return self._key("tourney", tourney_id)

    def tourney_deals(self, tourney_id: str) -> str:
        return self._key("tourney_deals", tourney_id)

    def tourney_deals_new(self, tourney_id: str, nonce: str) -> str:
        return self._key("tourney_deals_new", tourney_id, nonce)

    def tourney_tables(self, tourney_id: str) -> str:
        return self._key("tourney_tables", tourney_id)

    def tourney_table(self, tourney_id: str, table_id: str) -> str:
        return self._key("tourney_table", tourney_id, table_id)

    def tourney_lease(self, tourney_id: str, table_id: str) -> str:
        return self._key("tourney_lease", tourney_id, table_id)

    def tourney_games(self, tourney_id: str) -> str:
        return self._key("tourney_games", tourney_id)

    def tourney_records(self, tourney_id: str) -> str:
        return self._key("tourney_records", tourney_id)

    def tourney_log(self, tourney_id: str) -> str:
        return self._key("tourney_log", tourney_id)

    def tourney_away(self, tourney_id: str) -> str:
        return self._key("tourney_away", tourney_id)

    def tourney_away_clears(self, tourney_id: str) -> str:
        return self._key("tourney_away_clears", tourney_id)


def new_token(nbytes: int = 24) -> str:
    """A secret token of ``nbytes`` random bytes, URL-safe base64, that never begins with '-': one
    in 64 would, and a command line would take it for an option (``ohell bot connect --token -x...``
    fails in argparse). Redrawn, not edited: every token left is as likely as before."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if not token.startswith("-"):
            return token


def register_agent_token(client: Any, agent_id: str, token: str, keys: Keys = Keys()) -> None:
    """Store ``token`` for ``agent_id`` with a sync ``redis.Redis`` client (only its hash)."""
    client.hset(keys.agent_tokens, token_hash(token), agent_id)
