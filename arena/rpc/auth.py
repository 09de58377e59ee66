"""Token auth: agents send ``authorization: Bearer <token>`` metadata on every agent RPC; the
host sends its host token the same way on every administration RPC (docs/operations.md, roles).

The host token is a secret the services read from ``OHELL_HOST_TOKEN`` or from a file
(``--host-token-file``); without one, no caller is the host and every admin RPC is refused.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import grpc

from arena.keys import Keys, new_token, token_hash
from arena.rpc.settings import ConfigError, read_token

HOST_TOKEN_ENV = "OHELL_HOST_TOKEN"
WEB_TOKEN_ENV = "OHELL_WEB_TOKEN"  # the web app's own credential: reads only (load_web_token)
MIN_HOST_TOKEN = 16  # characters: a short host token is refused at start-up
# headers a stream's service sends once it has taken the call (the SDK waits for them)
AGENT_ID_HEADER = "ohell-agent-id"  # the gateway, with the agent's id: its stream is registered
QUEUED_HEADER = "ohell-queued"  # the matchmaker's WatchQueue: the ticket is queued


def load_host_token(path: str | None = None) -> str | None:
    """The host token from ``path`` or else ``$OHELL_HOST_TOKEN``; None if neither. A file given
    must hold one: an empty one would run the service with no host at all, without a word."""
    token = read_token(path, "--host-token-file") if path else os.environ.get(HOST_TOKEN_ENV, "").strip()
    return _checked(token, "the host token")


def load_web_token() -> str | None:
    """The web app's token (``$OHELL_WEB_TOKEN``), None without one. The web app reads the services
    with it for all its visitors; it may do what an anonymous caller may, under its own rate limit
    (``arena.rpc.ratelimit.DEFAULT_WEB_APP_LIMIT``) and without the per-caller cap on spectate
    streams (the web app bounds each visitor itself)."""
    return _checked(os.environ.get(WEB_TOKEN_ENV, "").strip(), "the web app's token")


def _checked(token: str, what: str) -> str | None:
    if not token:
        return None
    if len(token) < MIN_HOST_TOKEN:
        raise ConfigError(f"{what} must be at least {MIN_HOST_TOKEN} characters")
    return token


def new_host_token() -> str:
    return new_token(32)


def is_host(token: str | None, host_token: str | None) -> bool:
    """Whether ``token`` is the host token (compared in constant time)."""
    return same_secret(token, host_token)


def same_secret(token: str | None, secret: str | None) -> bool:
    """Whether ``token`` is ``secret`` (compared in constant time); never when either is missing."""
    return bool(token and secret and secrets.compare_digest(token.encode(), secret.encode()))


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


async def require_host(context: grpc.aio.ServicerContext, host_token: str | None, tokens: TokenStore) -> None:
    """Abort unless the caller sent the host token: UNAUTHENTICATED without a token or with an
    unknown one, PERMISSION_DENIED with an agent's token (agents only play)."""
    token = bearer_token(context.invocation_metadata())
    if is_host(token, host_token):
        return
    if token is None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing metadata 'authorization: Bearer <host token>'")
    if await tokens.agent_for_token(token) is not None:  # type: ignore[arg-type]
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, "this RPC needs the host token; agent tokens only play")
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token in 'authorization'")


# Metadata a caller holding the host token sends to be answered as anyone is: the web app's reads with
# the host token (when it has no web token of its own) serve every visitor.
PUBLIC_VIEW = ("ohell-view", "public")


def wants_public_view(metadata: Sequence[tuple[str, Any]] | None) -> bool:
    return any(key.lower() == PUBLIC_VIEW[0] and value == PUBLIC_VIEW[1] for key, value in metadata or ())


def auth_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The bearer metadata of ``token``, without surrounding whitespace: a token cut from a CSV line
    keeps its carriage return, which gRPC refuses to send (no token issued here has whitespace)."""
    return (("authorization", f"Bearer {token.strip()}"),)
