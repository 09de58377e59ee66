"""Per-caller rate limits on every RPC, shared by every process through Redis, and a guard for
requests that cannot be decoded or whose handler lost Redis. All are one gRPC server interceptor
(``CallGuard``).

A caller is its bearer token (by hash) when an agent holds the token, else its peer address (an IPv6
one by its /64: ``network_of``): a made-up token is no new caller with a budget of its own. The host
token is not limited, and the web app's token (``OHELL_WEB_TOKEN``: it reads for every visitor of
the web app) has its own, larger limit (``DEFAULT_WEB_APP_LIMIT``). The limit is GCRA (a token
bucket without a refill task): ``rate`` calls per second with bursts of ``burst``; its state is one
Redis string per caller (``Keys.rate_limit``), updated by one Lua script on Redis's clock (which
also looks the token up), so every replica of every service shares it. A refused call ends
RESOURCE_EXHAUSTED with trailing metadata ``retry-after`` (seconds) and the seconds in the message.
Without Redis, or with Redis away, the limit falls back to this process's own counters rather than
refusing everyone; a token counts there only when the service's own token store knows it (tokens
given on its command line), else the call counts as its peer's.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import redis

from arena.keys import Keys, token_hash
from arena.rpc.auth import TokenStore, bearer_token, is_host, same_secret
from arena.rpc.settings import ConfigError

log = logging.getLogger(__name__)
RATE_ENV = "OHELL_RATE_LIMIT"  # "<calls per second>:<burst>", e.g. "50:200"
WEB_APP_RATE_ENV = "OHELL_WEB_APP_RATE_LIMIT"  # the same, for the web app's token
GUARDED = "/ohell.v1."  # the platform's own services
REDIS_FAILURES = (redis.ConnectionError, redis.TimeoutError)  # as arena.redis_client's, which rpc may not import

# ARGV = prefix, caller, ms per call, burst window ms, the caller's token hash ('' without one), the
# caller's peer. A token that is not registered counts as its peer. Returns 0 (allowed) or ms to wait.
GCRA = """
local caller = ARGV[2]
if ARGV[5] ~= '' and redis.call('HEXISTS', K.agent_tokens(ARGV[1]), ARGV[5]) == 0 then caller = ARGV[6] end
local key = K.rate_limit(ARGV[1], caller)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local step, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', key) or now)
if tat < now then tat = now end
local wait = (tat - now) - (window - step)
-- under a microsecond: rounding (ROUNDING_MS). Whole ms: a Lua number's reply is an integer, and 0.5 was 0 (allowed)
if wait > 0.001 then return math.ceil(wait) end
redis.call('SET', key, tat + step, 'PX', math.ceil(tat + step - now) + 1000)
return 0
"""


@dataclass(frozen=True)
class RateLimit:
    rate: float = 100.0  # calls per second, sustained
    burst: int = 400  # calls at once

    @classmethod
    def from_env(cls, name: str = RATE_ENV, default: RateLimit | None = None) -> RateLimit:
        """The limit in ``$name`` ("<calls per second>:<burst>"), else ``default`` (else this class's)."""
        text = os.environ.get(name, "")
        if not text:
            return default or cls()
        try:
            rate, _, burst = text.partition(":")
            limit = cls(float(rate), int(burst or max(1, int(float(rate)))))
        except ValueError:
            limit = cls(0.0, 0)
        if not (math.isfinite(limit.rate) and limit.rate > 0 and limit.burst >= 1):
            raise ConfigError(f"{name}={text!r} must be '<calls per second>:<burst>', both positive")
        return limit

    @property
    def step_ms(self) -> float:
        return 1000.0 / self.rate

    @property
    def window_ms(self) -> float:
        return self.step_ms * self.burst


# The web app reads for all its visitors as one caller. It holds each visitor to 20 requests/s
# with bursts of 60 (services/web/visitors.py), and a page costs 1-5 calls (the ladders page one
# more per ladder): this carries twenty visitors at their full rate on five-call pages (a visitor's
# whole burst of the ladders page with 20 ladders is 1,260 calls), against 100:400 for one caller.
DEFAULT_WEB_APP_LIMIT = RateLimit(rate=2000.0, burst=8000)


ROUNDING_MS = 1e-3


class LocalLimiter:
    """GCRA in this process: the fallback when there is no Redis (or it is away)."""

    def __init__(self, limit: RateLimit, max_callers: int = 10_000) -> None:
        self.limit = limit
        self.tat: dict[str, float] = {}
        self.max_callers = max_callers

    def wait_ms(self, caller: str) -> float:
        now = time.monotonic() * 1000
        tat = max(self.tat.get(caller, now), now)
        # in this order: tat + step - window - now rounds when now + step crosses a power of two (the
        # clock's milliseconds just below 2**21, 2**22, ...): a burst of one then refused a first call.
        # A wait under ROUNDING_MS is what the sums of steps lost in rounding, not a limit reached.
        wait = (tat - now) - (self.limit.window_ms - self.limit.step_ms)
        if wait > ROUNDING_MS:
            return wait
        if caller not in self.tat and len(self.tat) >= self.max_callers:
            self.tat = {c: t for c, t in self.tat.items() if t > now}  # forget callers at rest
        self.tat[caller] = tat + self.limit.step_ms
        return 0.0


class Limiter:
    """Redis-backed GCRA; ``redis_client`` is a ``redis.asyncio`` client or None (local only)."""

    def __init__(self, limit: RateLimit, redis_client: Any | None = None, keys: Keys | None = None) -> None:
        self.limit = limit
        self.local = LocalLimiter(limit)
        self.keys = keys or Keys()
        self.script = redis_client.register_script(Keys.lua(GCRA)) if redis_client is not None else None

    async def wait_ms(
        self, caller: str, token_sha: str = "", peer: str = "", known: Callable[[], Awaitable[bool]] | None = None
    ) -> float:
        """``token_sha``: the hash of the token ``caller`` names; unless Redis holds it as an agent's,
        the call counts as ``peer``'s. Without Redis (or with Redis away) ``known()`` decides."""
        if self.script is not None:
            try:
                args = [self.keys.prefix, caller, self.limit.step_ms, self.limit.window_ms, token_sha, peer or caller]
                return float(await self.script(args=args))
            except Exception as error:  # Redis away: limit per process until it is back
                log.warning("rate limit falls back to this process: %s", error)
        if token_sha and not (known is not None and await known()):
            caller = peer or caller
        return self.local.wait_ms(caller)


async def token_known(tokens: TokenStore | None, token: str | None) -> bool:
    """Whether an agent holds ``token``; False when that cannot be told (no store, Redis away)."""
    if token is None or tokens is None:
        return False
    try:
        return await tokens.agent_for_token(token) is not None
    except Exception:  # the store is unreadable: not known
        return False


class BadRequest:
    """What a request that could not be decoded becomes (the handler answers INVALID_ARGUMENT)."""

    def __init__(self, message_type: str) -> None:
        self.message_type = message_type


async def refuse(context: grpc.aio.ServicerContext, wait_ms: float, why: str) -> None:
    """End the call RESOURCE_EXHAUSTED: ``why``, and when to retry (message and ``retry-after``)."""
    seconds = math.ceil(wait_ms) / 1000
    await context.abort(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"{why}: retry after {seconds:.3f} s",
        trailing_metadata=(("retry-after", f"{seconds:.3f}"),),
    )


def caller_of(context: grpc.aio.ServicerContext) -> str:
    """Who is calling, for limits: ``t:<token hash>`` or ``p:<peer host>`` (port left out). The token
    is taken as given: where it may be made up, see ``verified_caller``."""
    token = bearer_token(context.invocation_metadata())
    if token:
        return "t:" + token_hash(token)[:32]
    return peer_of(context)


def peer_of(context: grpc.aio.ServicerContext) -> str:
    """``p:<peer host>``: an IP address as ``network_of`` has it (``ipv4:a.b.c.d``, ``ipv6:<the /64>``)."""
    peer = context.peer() or "unknown"
    host = peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer
    kind, _, address = host.partition(":")
    network = network_of(address.removeprefix("[").removesuffix("]")) if kind in ("ipv4", "ipv6") else None
    if network is not None:
        host = ("ipv6:" if ":" in network else "ipv4:") + network
    return "p:" + host[:80]


def network_of(address: str) -> str | None:
    """Whose a client's IP address is, for per-caller limits: an IPv6 address stands for its /64
    (what one subscriber or machine is given: each of its 2**64 addresses would otherwise be a new
    caller), an IPv4 address (also one mapped into IPv6 by a dual-stack server) for itself. None for
    what is not an IP address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


async def verified_caller(context: grpc.aio.ServicerContext, tokens: TokenStore) -> str:
    """``caller_of``, but a token no agent holds counts as its peer (a caller making up a token on
    every call is still one caller). Tokens unreadable (Redis away): the peer too."""
    known = await token_known(tokens, bearer_token(context.invocation_metadata()))
    return caller_of(context) if known else peer_of(context)


class CallGuard(grpc.aio.ServerInterceptor):
    """Rate-limits every call (the host token excepted; the web app's token by ``web_limiter``),
    turns an undecodable request into INVALID_ARGUMENT naming the message type (grpc would answer
    UNKNOWN or INTERNAL) and a Redis failure into UNAVAILABLE. Limits only: what a token may do is
    each RPC's own check."""

    def __init__(
        self,
        limiter: Limiter,
        host_token: str | None = None,
        web_token: str | None = None,
        web_limiter: Limiter | None = None,
        tokens: TokenStore | None = None,
    ) -> None:
        self.limiter = limiter
        self.host_token = host_token
        self.web_token = web_token
        self.web_limiter = web_limiter or limiter
        self.tokens = tokens  # decides whether a token is an agent's when Redis cannot

    @classmethod
    def from_env(
        cls,
        redis_client: Any | None,
        keys: Keys,
        host_token: str | None,
        web_token: str | None,
        limit: RateLimit | None = None,
        tokens: TokenStore | None = None,
    ) -> CallGuard:
        """A service's guard: ``limit`` (default ``$OHELL_RATE_LIMIT``) per caller,
        ``$OHELL_WEB_APP_RATE_LIMIT`` (default DEFAULT_WEB_APP_LIMIT) for the web app's token, both
        shared through ``redis_client``; ``tokens`` tells agents' tokens when Redis cannot."""
        web_limit = RateLimit.from_env(WEB_APP_RATE_ENV, DEFAULT_WEB_APP_LIMIT)
        limiter = Limiter(limit or RateLimit.from_env(), redis_client, keys)
        return cls(limiter, host_token, web_token, Limiter(web_limit, redis_client, keys), tokens)

    async def admit(self, context: grpc.aio.ServicerContext) -> None:
        token = bearer_token(context.invocation_metadata())
        if is_host(token, self.host_token):
            return
        if same_secret(token, self.web_token):  # not an agent's token: no lookup
            limiter, wait_ms = self.web_limiter, await self.web_limiter.wait_ms("w:" + caller_of(context)[2:])
        else:
            limiter, token_sha = self.limiter, token_hash(token) if token else ""
            known = functools.partial(token_known, self.tokens, token)  # asked only when Redis cannot tell
            wait_ms = await limiter.wait_ms(caller_of(context), token_sha, peer_of(context), known)
        if wait_ms > 0:
            limit = limiter.limit
            await refuse(context, wait_ms, f"rate limit of {limit.rate:g} calls/s (burst {limit.burst}) reached")

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or not str(details.method).startswith(GUARDED):
            return handler  # health and reflection: probes call them (arena.rpc.probes bounds their streams)
        return self._wrap(handler, str(details.method))

    def _wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        deserialize = handler.request_deserializer
        if handler.request_streaming:
            kind = "stream_stream" if handler.response_streaming else "stream_unary"
        else:
            kind = "unary_stream" if handler.response_streaming else "unary_unary"
            deserialize = _tolerant(deserialize, method)
        inner = getattr(handler, kind)
        guard = self

        if inspect.isasyncgenfunction(inner):

            async def streaming(request: Any, context: grpc.aio.ServicerContext) -> Any:
                await guard._check(request, context)
                try:
                    async for response in inner(request, context):
                        yield response
                except REDIS_FAILURES as error:
                    await _unavailable(context, error)

            behavior: Any = streaming
        else:

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                await guard._check(request, context)
                try:
                    return await inner(request, context)
                except REDIS_FAILURES as error:
                    await _unavailable(context, error)

            behavior = unary
        factory = getattr(grpc, f"{kind}_rpc_method_handler")
        return factory(behavior, request_deserializer=deserialize, response_serializer=handler.response_serializer)

    async def _check(self, request: Any, context: grpc.aio.ServicerContext) -> None:
        await self.admit(context)
        if isinstance(request, BadRequest):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"request: the bytes are not a valid {request.message_type} message"
            )


async def _unavailable(context: grpc.aio.ServicerContext, error: Exception) -> None:
    # unhandled, grpc answered UNKNOWN with the error's text, which names Redis's address
    await context.abort(
        grpc.StatusCode.UNAVAILABLE, f"the service cannot reach its Redis ({type(error).__name__}): retry"
    )


def _tolerant(deserialize: Callable[[bytes], Any] | None, method: str) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None
    name = method.rsplit("/", 1)[-1] + "Request"

    def tolerant(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception:
            return BadRequest(name)

    return tolerant
