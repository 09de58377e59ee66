"""The engine service: gateway, rules API, challenge and spectate on one gRPC server.

engine = await start_engine("127.0.0.1:0", tokens, redis_url=...)   # tests, `ohell engine`
...; await engine.stop()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.keys import Keys
from arena.play.events import EventLog, RedisEventLog
from arena.play.host import local_events
from arena.play.specs import TimeControl
from arena.proto.ohell.v1 import (
    challenge_pb2,
    challenge_pb2_grpc,
    gateway_pb2,
    rules_service_pb2,
    rules_service_pb2_grpc,
    spectate_pb2,
    spectate_pb2_grpc,
)
from arena.rpc.auth import RedisTokens, StaticTokens, TokenStore, load_host_token, load_web_token
from arena.rpc.ratelimit import CallGuard, RateLimit
from arena.rpc.server import DEFAULT_LIMITS, Limits, Served, Service, create_server, stop_server
from services.engine.challenge import HOST_CONNECTIONS, ChallengeApi
from services.engine.gateway import Gateway
from services.engine.rules_api import RulesApi
from services.engine.spectate import FEED_CONNECTIONS, SpectateApi


def _name(module: Any, service: str) -> str:
    return str(module.DESCRIPTOR.services_by_name[service].full_name)


@dataclass
class Engine:
    served: Served
    gateway: Gateway
    redis: Any | None
    spectate_redis: Any | None = None  # the spectators' readers' own client (SpectateApi)
    challenge_redis: Any | None = None  # the challenges' hosts' own client (ChallengeApi)

    @property
    def port(self) -> int:
        return self.served.port

    async def stop(self, grace: float = 2.0) -> None:
        await self.gateway.stop()
        await stop_server(self.served, grace)
        await self.close_redis()

    async def close_redis(self) -> None:
        await _close_clients(self.redis, self.spectate_redis, self.challenge_redis)


async def _close_clients(*clients: Any | None) -> None:
    for client in clients:
        if client is not None:
            await client.aclose()


async def start_engine(
    address: str = "127.0.0.1:0",
    tokens: dict[str, str] | None = None,
    redis_url: str | None = None,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    keys: Keys | None = None,
    host_token: str | None = None,
    rate_limit: RateLimit | None = None,
    web_token: str | None = None,
    unix_socket: str | None = None,
) -> Engine:
    """Start the engine service. ``tokens`` maps token -> agent id (besides those in Redis);
    ``host_token`` defaults to ``$OHELL_HOST_TOKEN``; ``rate_limit`` to ``$OHELL_RATE_LIMIT``;
    ``web_token`` (the web app's: its own rate limit) to ``$OHELL_WEB_TOKEN``; ``unix_socket``: a path
    it listens on too (create_server's)."""
    host_token = host_token or load_host_token()
    web_token = web_token or load_web_token()
    redis_client = None
    keys = keys or Keys.from_env()
    static = StaticTokens(tokens or {})
    token_store: TokenStore = static
    log: EventLog = local_events()
    spectate_client = challenge_client = None
    if redis_url:
        import redis.asyncio as aioredis

        redis_client = aioredis.Redis.from_url(redis_url)
        token_store = RedisTokens(redis_client, keys, fallback=static)
        # spectators' readers block on Redis: on a pool of their own they never take the connections
        # every other call needs
        spectate_client = aioredis.Redis.from_url(redis_url, max_connections=FEED_CONNECTIONS)
        log = RedisEventLog(spectate_client, keys)
        # nor do the hosts of challenges, each listening for its agents' answers while its match lasts
        challenge_client = aioredis.Redis.from_url(redis_url, max_connections=HOST_CONNECTIONS)
    gateway = Gateway(token_store, redis_client, keys)
    try:
        await gateway.start()
        rules_api = RulesApi(token_store)
        challenge = ChallengeApi(
            token_store, redis_client, time_control or TimeControl(), keys, host_token, challenge_client
        )
        spectate = SpectateApi(log, token_store, host_token, web_token, redis_client, keys)
        services = [
            Service(
                _name(gateway_pb2, "AgentGatewayService"),
                gateway.add_to_server,
            ),
            Service(
                _name(rules_service_pb2, "RulesService"),
                lambda s: rules_service_pb2_grpc.add_RulesServiceServicer_to_server(rules_api, s),
            ),
            Service(
                _name(challenge_pb2, "ChallengeService"),
                lambda s: challenge_pb2_grpc.add_ChallengeServiceServicer_to_server(challenge, s),
            ),
            Service(
                _name(spectate_pb2, "SpectateService"),
                lambda s: spectate_pb2_grpc.add_SpectateServiceServicer_to_server(spectate, s),
            ),
        ]
        guard = CallGuard.from_env(redis_client, keys, host_token, web_token, rate_limit, token_store)
        served = await create_server(
            address, services, limits or DEFAULT_LIMITS, interceptors=[guard], unix_socket=unix_socket
        )
    except BaseException:  # a port taken, a malformed limit: what was made so far is let go, not leaked
        await gateway.stop()  # its listener's connection, its place among the process's gateways
        await _close_clients(redis_client, spectate_client, challenge_client)
        raise
    return Engine(served, gateway, redis_client, spectate_client, challenge_client)
