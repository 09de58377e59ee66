"""The Redis keyspace shared by the services and workers (docs/protocol.md, "Relay").

Every key starts with ``ohell:``. Functions return key names; nothing here talks to Redis
except the token helpers at the end.
"""

from __future__ import annotations

import hashlib

PREFIX = "ohell:"

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
