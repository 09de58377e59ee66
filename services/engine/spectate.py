"""SpectateService: the public events of a match, from its start, live until it ends.

Every spectator of one match shares one reader of its event log (``SharedFeeds``): a thousand
spectators cost one Redis read loop, not a thousand blocked connections. A caller (an agent's
token; else the peer address, also for a token no agent holds) may follow at most
``MAX_SPECTATES_PER_CALLER`` matches at once on all engine replicas together (``Slots``; the host
and the web app's token excepted: the web app relays its visitors' live views and bounds each
visitor itself), and wait at most ``MAX_WAIT_MS`` for a match to appear. A match is followed
(given a reader, at most ``MAX_FEEDS`` at once) only once it has events: waiting for one costs none.
Waits for matches with no events yet are at most ``MAX_AWAITED_PER_CALLER`` of one caller (the host
and the web app's token included) and ``MAX_AWAITED`` of the other callers together on one engine: the
host's and the web app's are outside that shared cap, which others filling it would shut them out of.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from arena.keys import Keys
from arena.play.events import EventLog, FeedSilent
from arena.proto.ohell.v1 import spectate_pb2, spectate_pb2_grpc
from arena.rpc.auth import TokenStore, bearer_token, is_host, same_secret
from arena.rpc.ratelimit import verified_caller
from services.engine.slots import Slots

MAX_WAIT_MS = 60_000
MAX_SPECTATES_PER_CALLER = 8
# Matches followed at once on one engine: each has one reader blocked on Redis, on a pool of the
# readers' own (``FEED_CONNECTIONS``). On the engine's one pool, 100 readers (the web app's token
# follows uncapped) took every connection the gateway, the rate limits and the match hosts need.
MAX_FEEDS = 256
FEED_CONNECTIONS = MAX_FEEDS + 8  # a reader holds one at a time; a few to spare for followers' reads
# How often the engine looks (in one round trip for all) for the matches awaited before they exist.
ARRIVAL_POLL_S = 0.2
# Waits for matches with no events yet, on one engine: each is a stream held open and an id in every
# look. The web app's token and the host's waited uncapped (a caller's streams are capped otherwise).
# MAX_AWAITED is the other callers' together (the host's and the web app's are not counted in it: 512
# addresses holding their 8 streams each would otherwise refuse every live view of the web app).
MAX_AWAITED = 4096
MAX_AWAITED_PER_CALLER = 1024


class FeedsFull(Exception):
    """MAX_FEEDS matches are followed on this engine: no reader for another one now; or (``WaitsFull``)
    MAX_AWAITED waits of the shared callers for matches not there yet, or MAX_AWAITED_PER_CALLER of the
    caller's, are open."""


class WaitsFull(FeedsFull):
    pass


class _Feed:
    """One reader of one match's events, kept in memory for every follower."""

    def __init__(self, log: EventLog, match_id: str) -> None:
        self.events: list[spectate_pb2.MatchEvent] = []
        self.outcome: BaseException | bool | None = None  # True: ended; an exception: how it failed
        self.changed = asyncio.Event()
        self.followers = 0
        self.task = asyncio.create_task(self._read(log, match_id))

    async def _read(self, log: EventLog, match_id: str) -> None:
        try:
            async for event in log.follow(match_id, MAX_WAIT_MS / 1000):
                self.events.append(event)
                self._wake()
            self.outcome = True
        except asyncio.CancelledError:
            raise
        except Exception as error:  # LookupError, FeedSilent, or Redis failing: every follower sees it
            self.outcome = error
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class _Awaited:
    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.looked = asyncio.Event()  # looked for once at least since the first waiter came
        self.waiters = 0
        self.failure: BaseException | None = None


class _Arrivals:
    """Followers of matches that have no events yet. Had each a reader, a caller could take every
    one of the MAX_FEEDS readers by following matches that never come (32 callers of 8 streams did):
    instead one task looks for all of them at once every ARRIVAL_POLL_S, and a reader is started
    only for a match that is there."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.awaited: dict[str, _Awaited] = {}
        self.poller: asyncio.Task[None] | None = None
        self.waits: dict[str, int] = {}  # caller -> its waits open (MAX_AWAITED_PER_CALLER)
        self.open = 0  # waits of the shared callers open (MAX_AWAITED)

    async def wait(self, match_id: str, timeout: float, caller: str = "", shared: bool = True) -> bool:
        """Whether the match has events within ``timeout`` (one that has them already is found
        however short the wait); raises what the event log raised, WaitsFull past the caps: the caller's
        own, and for a ``shared`` caller (not the host, not the web app) MAX_AWAITED of them all."""
        if shared and self.open >= MAX_AWAITED:
            raise WaitsFull(
                f"{MAX_AWAITED} waits for matches not started yet are open on this engine: try again shortly"
            )
        if self.waits.get(caller, 0) >= MAX_AWAITED_PER_CALLER:
            raise WaitsFull(
                f"{MAX_AWAITED_PER_CALLER} waits of yours for matches not started yet are open on this engine: "
                "close one first"
            )
        self.open += shared
        self.waits[caller] = self.waits.get(caller, 0) + 1
        try:
            return await self._wait(match_id, timeout)
        finally:
            self.open -= shared
            self.waits[caller] -= 1
            if not self.waits[caller]:
                del self.waits[caller]

    async def _wait(self, match_id: str, timeout: float) -> bool:
        awaited = self.awaited.setdefault(match_id, _Awaited())
        awaited.waiters += 1
        if self.poller is None or self.poller.done():
            self.poller = asyncio.create_task(self._poll())
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(awaited.arrived.wait(), timeout)
            await awaited.looked.wait()
        finally:
            awaited.waiters -= 1
            if not awaited.waiters and self.awaited.get(match_id) is awaited:
                del self.awaited[match_id]
        if awaited.failure is not None:
            raise awaited.failure
        return awaited.arrived.is_set()

    async def _poll(self) -> None:
        while self.awaited:
            looked_for = dict(self.awaited)
            failure: Exception | None = None
            try:
                found = await self.log.existing(list(looked_for))
            except Exception as error:  # Redis failing: every waiter sees it
                found, failure = set(looked_for), error
            for match_id, awaited in looked_for.items():
                awaited.looked.set()
                if match_id in found:
                    awaited.failure = failure
                    awaited.arrived.set()
                    if self.awaited.get(match_id) is awaited:
                        del self.awaited[match_id]
            await asyncio.sleep(ARRIVAL_POLL_S)


class SharedFeeds:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.feeds: dict[str, _Feed] = {}
        self.arrivals = _Arrivals(log)

    async def follow(
        self, match_id: str, wait_s: float, caller: str = "", shared: bool = True
    ) -> AsyncIterator[spectate_pb2.MatchEvent]:
        """As ``EventLog.follow``: LookupError when nothing came within ``wait_s``; FeedsFull past a cap
        (``_Arrivals.wait``'s for ``caller`` and ``shared``)."""
        if match_id not in self.feeds and not await self.arrivals.wait(match_id, wait_s, caller, shared):
            raise LookupError(match_id)
        feed = self.feeds.get(match_id)
        if feed is None or feed.outcome is not None:
            if feed is None and len(self.feeds) >= MAX_FEEDS:
                raise FeedsFull(f"{MAX_FEEDS} matches are followed on this engine: try again shortly")
            feed = self.feeds[match_id] = _Feed(self.log, match_id)
        feed.followers += 1
        index = 0
        try:
            while True:
                while index < len(feed.events):
                    index += 1
                    yield feed.events[index - 1]
                if feed.outcome is True:
                    return
                if isinstance(feed.outcome, BaseException):
                    raise feed.outcome
                await feed.changed.wait()  # the match is there: its reader has events or an outcome soon
        finally:
            feed.followers -= 1
            if feed.followers == 0:
                if self.feeds.get(match_id) is feed:
                    del self.feeds[match_id]
                feed.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await feed.task


class SpectateApi(spectate_pb2_grpc.SpectateServiceServicer):
    def __init__(
        self,
        log: EventLog,
        tokens: TokenStore,
        host_token: str | None = None,
        web_token: str | None = None,
        redis_client: Any | None = None,
        keys: Keys | None = None,
    ) -> None:
        self.feeds = SharedFeeds(log)
        self.tokens = tokens
        self.host_token = host_token
        self.web_token = web_token  # the web app's: it holds each of its visitors to 4 streams itself
        self.watching = Slots("spectate", MAX_SPECTATES_PER_CALLER, redis_client, keys or Keys())

    async def Spectate(
        self, request: spectate_pb2.SpectateRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[spectate_pb2.SpectateResponse]:
        if not request.match_id or len(request.match_id) > 128:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id: must be 1-128 characters")
        if request.wait_ms > MAX_WAIT_MS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"wait_ms: {request.wait_ms} is over {MAX_WAIT_MS}")
        token = bearer_token(context.invocation_metadata())
        host = is_host(token, self.host_token)
        web = not host and same_secret(token, self.web_token)
        caller = "the host" if host else "the web app" if web else await verified_caller(context, self.tokens)
        lease = None if host or web else await self.watching.claim(caller)
        if lease is None and not (host or web):
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_SPECTATES_PER_CALLER} spectate streams of yours are open: close one first",
            )
        try:
            async for event in self.feeds.follow(request.match_id, request.wait_ms / 1000, caller, not (host or web)):
                yield spectate_pb2.SpectateResponse(event=event)
        except LookupError:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"match_id: no match {request.match_id!r} (waited {request.wait_ms} ms)"
            )
        except FeedSilent as silent:
            await context.abort(grpc.StatusCode.ABORTED, str(silent))
        except FeedsFull as full:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(full))
        except Exception as error:  # the event log failed (Redis away): the caller may retry
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, f"the match's events cannot be read now: {type(error).__name__}"
            )
        finally:
            if lease is not None:
                await lease.release()
