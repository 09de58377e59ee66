"""The Redis keyspace of the ladder, in one place. Every key starts with a prefix ("ohell:").

    {p}agent:{id}              hash   an agent (name, kind, bot, version, endpoint, token_sha, house)
    {p}agent-names             hash   name -> agent id (names are unique)
    {p}agent_tokens            hash   SHA-256 of a token -> agent id
    {p}agent-seq               string last agent number
    {p}agent-matches:{id}      list   match ids the agent played, newest first
    {p}ladders                 set    ladder names
    {p}ladder:{l}              string the ladder definition (JSON)
    {p}house:{l}               list   house agent ids of a ladder
    {p}queue:{l}               zset   agent id -> enqueue time (ms): one ticket per agent per ladder
    {p}ticket:{l}:{id}         string the ticket's lease; expires when its holder stops renewing it
                                      (no TTL for built-in agents, which stay enrolled)
    {p}enrolled:{l}            set    built-in agents put back in the queue after each match
    {p}busy:{id}               string the match an agent sits at (so it never sits at two)
    {p}seated:{id}             stream tables a connected or endpoint agent was seated at (match, seat)
    {p}match-seq               string last match number
    {p}match:{m}               hash   match state (queued|running|finished|failed), seats, times
    {p}match-lease:{m}         string the runner holding the match; expires if it dies
    {p}active                  set    matches not finished yet (the recovery sweep reads it)
    {p}record:{m}              string the JSON match record of a finished match
    {p}log:{l}                 stream the durable match log: one entry per finished match
    {p}rated:{l}               string stream id of the last log entry applied to the ratings
    {p}ratings:{l}             hash   agent id -> JSON [mu, sigma]
    {p}stats:{l}               hash   agent id -> JSON counts [games, hands, exact, faults, forfeits,
                                      win shares (x420), points] (arena.ladder.ratings.STAT_FIELDS)
    {p}board:{l}               zset   agent id -> ordinal (mu - 3 sigma)
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"  # REDIS_URL when unset, for every process of the stack

DEFAULT_PREFIX = "ohell:"

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


@dataclass(frozen=True)
class Keys:
    prefix: str = DEFAULT_PREFIX

    def agent(self, agent_id: str) -> str:
        return f"{self.prefix}agent:{agent_id}"

    @property
    def agent_names(self) -> str:
        return f"{self.prefix}agent-names"

    @property
    def agent_tokens(self) -> str:
        return f"{self.prefix}agent_tokens"  # shared with arena.keys

    @property
    def agent_seq(self) -> str:
        return f"{self.prefix}agent-seq"

    def agent_matches(self, agent_id: str) -> str:
        return f"{self.prefix}agent-matches:{agent_id}"

    @property
    def ladders(self) -> str:
        return f"{self.prefix}ladders"

    def ladder(self, ladder: str) -> str:
        return f"{self.prefix}ladder:{ladder}"

    def house(self, ladder: str) -> str:
        return f"{self.prefix}house:{ladder}"

    def queue(self, ladder: str) -> str:
        return f"{self.prefix}queue:{ladder}"

    def ticket(self, ladder: str, agent_id: str) -> str:
        return f"{self.prefix}ticket:{ladder}:{agent_id}"

    def enrolled(self, ladder: str) -> str:
        return f"{self.prefix}enrolled:{ladder}"

    def busy(self, agent_id: str) -> str:
        return f"{self.prefix}busy:{agent_id}"

    def seated(self, agent_id: str) -> str:
        return f"{self.prefix}seated:{agent_id}"

    @property
    def match_seq(self) -> str:
        return f"{self.prefix}match-seq"

    def match(self, match_id: str) -> str:
        return f"{self.prefix}match:{match_id}"

    def match_lease(self, match_id: str) -> str:
        return f"{self.prefix}match-lease:{match_id}"

    @property
    def active(self) -> str:
        return f"{self.prefix}active"

    def record(self, match_id: str) -> str:
        return f"{self.prefix}record:{match_id}"

    def log(self, ladder: str) -> str:
        return f"{self.prefix}log:{ladder}"

    def rated(self, ladder: str) -> str:
        return f"{self.prefix}rated:{ladder}"

    def ratings(self, ladder: str) -> str:
        return f"{self.prefix}ratings:{ladder}"

    def stats(self, ladder: str) -> str:
        return f"{self.prefix}stats:{ladder}"

    def board(self, ladder: str) -> str:
        return f"{self.prefix}board:{ladder}"


# Keys of the relay, presence and spectate streams (docs/protocol.md, "Relay").

PREFIX = DEFAULT_PREFIX

# hash: sha256(token) hex -> agent id. The matchmaker writes it when it registers an agent.
AGENT_TOKENS = PREFIX + "agent_tokens"

PRESENCE_TTL_S = 10  # an agent's presence key lives this long without a refresh
PRESENCE_REFRESH_S = 2  # also how soon presence is back after a Redis restart


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def agent_presence(agent_id: str) -> str:
    """string: the id of the gateway holding the agent's stream (TTL PRESENCE_TTL_S)."""
    return f"{PREFIX}agent:{agent_id}:gateway"


def gateway_channel(gateway_id: str) -> str:
    """pub/sub channel a gateway listens on: RelayEnvelopes for the agents it holds."""
    return f"{PREFIX}gateway:{gateway_id}"


def host_channel(host_id: str) -> str:
    """pub/sub channel a match host listens on: actions and undeliverable notices."""
    return f"{PREFIX}host:{host_id}"


def match_events(match_id: str) -> str:
    """stream: the match's public MatchEvents (field ``e``: serialized bytes), for spectators."""
    return f"{PREFIX}match:{match_id}:events"


MATCH_EVENTS_TTL_S = 24 * 3600
MATCH_EVENTS_MAXLEN = 20_000


def challenge_id(match_id: str) -> str:
    """string: reserves a challenge's match id (SET NX, TTL MATCH_EVENTS_TTL_S) so that no two
    engine services start matches with one id; expires with the match's events."""
    return f"{PREFIX}challenge:{match_id}"


def register_agent_token(client: object, agent_id: str, token: str) -> None:
    """Store ``token`` for ``agent_id`` with a sync ``redis.Redis`` client (only its hash)."""
    client.hset(AGENT_TOKENS, token_hash(token), agent_id)  # type: ignore[attr-defined]


def revoke_agent_token(client: object, token: str) -> None:
    client.hdel(AGENT_TOKENS, token_hash(token))  # type: ignore[attr-defined]
