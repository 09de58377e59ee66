"""Token auth: agents send ``authorization: Bearer <token>`` metadata on every agent RPC."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import grpc

from arena.keys import Keys, token_hash


class TokenStore(Protocol):
    async def agent_for_token(self, token: str) -> str | None: ...


class StaticTokens:
    """Tokens given on the command line or by a test: token -> agent id."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._by_hash = {token_hash(token): agent for token, agent in tokens.items()}

    def add(self, token: str, agent_id: str) -> None:
        self._by_hash[token_hash(token)] = agent_id

    async def agent_for_token(self, token: str) -> str | None:
        return self._by_hash.get(token_hash(token))


class RedisTokens:
    """Tokens registered in Redis (the matchmaker writes them), looked up by hash."""

    def __init__(self, client: Any, keys: Keys, fallback: TokenStore | None = None) -> None:
        self._client = client  # redis.asyncio.Redis
        self._tokens_key = keys.agent_tokens
        self._fallback = fallback

    async def agent_for_token(self, token: str) -> str | None:
        found = await self._client.hget(self._tokens_key, token_hash(token))
        if found is None and self._fallback is not None:
            return await self._fallback.agent_for_token(token)
        return found.decode() if isinstance(found, bytes) else found


def bearer_token(metadata: Sequence[tuple[str, Any]] | None) -> str | None:
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode() if isinstance(value, bytes) else str(value)
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


async def authenticate(context: grpc.aio.ServicerContext, tokens: TokenStore) -> str:
    """The agent id of the caller, or abort with UNAUTHENTICATED naming what is wrong."""
    token = bearer_token(context.invocation_metadata())
    if token is None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing metadata 'authorization: Bearer <token>'")
    agent_id = await tokens.agent_for_token(token)  # type: ignore[arg-type]
    if agent_id is None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown agent token in 'authorization'")
    return agent_id  # type: ignore[return-value]


def auth_metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)
