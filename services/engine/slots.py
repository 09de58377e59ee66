"""Per-caller slots (challenges in play, spectate streams open) counted across engine replicas.

With Redis, a caller's slots of one kind are a sorted set of leases (``Keys.slots``: lease id ->
expiry ms on Redis's clock), claimed by one Lua script that first drops expired leases; a held lease
is renewed every ``SLOT_REFRESH_S`` while its challenge or stream lasts, so a replica that dies frees
its slots within ``SLOT_LEASE_MS``. Without Redis, or with Redis away, the limit falls back to this
process's own count (as arena.rpc.ratelimit does) rather than refusing everyone.

lease = await slots.claim(caller)   # None: the caller holds ``limit`` slots already
try: ... finally: await lease.release()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any

from arena.keys import Keys

log = logging.getLogger(__name__)
SLOT_LEASE_MS = 10_000  # a slot its holder stopped renewing (it died) is free after this long
SLOT_REFRESH_S = 2.0

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
# ARGV = prefix, kind, caller, lease id, limit, lease ms. Returns 1 (claimed) or 0 (all slots taken).
CLAIM = (
    "local key = K.slots(ARGV[1], ARGV[2], ARGV[3])"
    + _NOW
    + """
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZCARD', key) >= tonumber(ARGV[5]) then return 0 end
redis.call('ZADD', key, now + tonumber(ARGV[6]), ARGV[4])
redis.call('PEXPIRE', key, ARGV[6])
return 1
"""
)
# ARGV = prefix, kind, caller, lease id, lease ms. Puts the lease back too if it had expired meanwhile
# (Redis was away longer than a lease): the challenge or stream is still there.
RENEW = (
    "local key = K.slots(ARGV[1], ARGV[2], ARGV[3])"
    + _NOW
    + """
redis.call('ZADD', key, now + tonumber(ARGV[5]), ARGV[4])
redis.call('PEXPIRE', key, ARGV[5])
return 1
"""
)
# ARGV = prefix, kind, caller, lease id.
RELEASE = "return redis.call('ZREM', K.slots(ARGV[1], ARGV[2], ARGV[3]), ARGV[4])"


class Lease:
    """One slot held by this process; renewed in Redis until ``release``."""

    def __init__(self, slots: Slots, caller: str, lease_id: str | None) -> None:
        self.slots = slots
        self.caller = caller
        self.lease_id = lease_id  # None: counted in this process only (no Redis, or Redis away)
        self.renewal = asyncio.create_task(self._renew()) if lease_id is not None else None

    async def _renew(self) -> None:
        assert self.lease_id is not None
        while True:
            await asyncio.sleep(SLOT_REFRESH_S)
            try:
                await self.slots.run("renew", self.caller, self.lease_id, SLOT_LEASE_MS)
            except Exception as error:  # Redis away: the lease is put back at the next renewal
                log.warning("%s slot of %s not renewed: %s", self.slots.kind, self.caller, error)

    async def release(self) -> None:
        self.slots.forget(self.caller)
        if self.renewal is None or self.lease_id is None:
            return
        self.renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.renewal
        try:
            await self.slots.run("release", self.caller, self.lease_id)
        except Exception as error:  # Redis away: the lease expires on its own
            log.warning("%s slot of %s not released: %s", self.slots.kind, self.caller, error)


class Slots:
    """At most ``limit`` slots of ``kind`` per caller, across every process sharing ``redis_client``."""

    def __init__(self, kind: str, limit: int, redis_client: Any | None, keys: Keys) -> None:
        self.kind = kind
        self.limit = limit
        self.keys = keys
        self.held: dict[str, int] = {}  # caller -> slots held by this process
        self.scripts: dict[str, Any] = {}  # empty without Redis
        if redis_client is not None:
            for name, script in (("claim", CLAIM), ("renew", RENEW), ("release", RELEASE)):
                self.scripts[name] = redis_client.register_script(Keys.lua(script))

    async def run(self, script: str, caller: str, *args: Any) -> Any:
        return await self.scripts[script](args=[self.keys.prefix, self.kind, caller, *args])

    async def claim(self, caller: str) -> Lease | None:
        """A slot for ``caller``, or None when it holds ``limit`` already."""
        lease_id: str | None = None
        if self.scripts:
            try:
                lease_id = uuid.uuid4().hex
                if not await self.run("claim", caller, lease_id, self.limit, SLOT_LEASE_MS):
                    return None
            except Exception as error:  # Redis away: count in this process until it is back
                log.warning("%s slots fall back to this process: %s", self.kind, error)
                lease_id = None
        if lease_id is None and self.held.get(caller, 0) >= self.limit:
            return None
        self.held[caller] = self.held.get(caller, 0) + 1
        return Lease(self, caller, lease_id)

    def forget(self, caller: str) -> None:
        self.held[caller] -= 1
        if not self.held[caller]:
            del self.held[caller]
