"""Public match events for spectators, and where they are kept.

``PublicFeed`` turns the engine's state after each step into MatchEvents, sending a card only
once it is public: the trump when turned (at the deal, blind bidding included: 003 turns it face
up before the bids), a card when played; sealed blind bids only at the reveal (all together, before
the dealer's hook rebid if there is one). Hands are never sent. ``EventLog`` stores them: in this
process (``LocalEventLog``) or in a Redis stream per match (``RedisEventLog``), so a spectator
of a match hosted by another process (a Celery worker) can follow it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from arena.keys import MATCH_EVENTS_MAXLEN, MATCH_EVENTS_TTL_S, Keys
from arena.proto.ohell.v1 import match_pb2, spectate_pb2
from arena.wire import card_to_proto, trick_to_proto
from ohell.cards import NO_CARD
from ohell.rules import Bidding
from ohell.state import HandResult, Phase, State

_END = "match_ended"
# A followed match that sends nothing for this long is taken to be dead (its host crashed, or the
# batch with ``match_ended`` was lost): the spectator's stream ends instead of waiting forever.
SILENCE_LIMIT_S = 60.0


class FeedSilent(Exception):
    """The followed match stopped producing events before ``match_ended``."""


class EventLog(Protocol):
    async def append(self, match_id: str, event: spectate_pb2.MatchEvent) -> None: ...

    async def append_many(self, match_id: str, events: list[spectate_pb2.MatchEvent]) -> None: ...

    def follow(
        self, match_id: str, wait_s: float, silence_s: float = SILENCE_LIMIT_S
    ) -> AsyncIterator[spectate_pb2.MatchEvent]: ...

    async def existing(self, match_ids: list[str]) -> set[str]:
        """Those of ``match_ids`` with events stored, without waiting for any."""
        ...


class LocalEventLog:
    """Events of matches hosted in this process (kept until ``max_matches`` newer ones)."""

    def __init__(self, max_matches: int = 1000) -> None:
        self.events: dict[str, list[spectate_pb2.MatchEvent]] = {}
        self.changed: dict[str, asyncio.Event] = {}
        self.waiting: dict[str, int] = {}  # match id not started yet -> followers waiting for it
        self.max_matches = max_matches

    def _signal(self, match_id: str) -> asyncio.Event:
        return self.changed.setdefault(match_id, asyncio.Event())

    async def append(self, match_id: str, event: spectate_pb2.MatchEvent) -> None:
        if match_id not in self.events and len(self.events) >= self.max_matches:
            oldest = next(iter(self.events))
            self.events.pop(oldest)
            evicted = self.changed.pop(oldest, None)
            if evicted is not None:
                evicted.set()  # its followers wake up and see it gone
        self.events.setdefault(match_id, []).append(event)
        signal = self._signal(match_id)
        signal.set()
        self.changed[match_id] = asyncio.Event()

    async def append_many(self, match_id: str, events: list[spectate_pb2.MatchEvent]) -> None:
        for event in events:
            await self.append(match_id, event)

    async def existing(self, match_ids: list[str]) -> set[str]:
        return {match_id for match_id in match_ids if match_id in self.events}

    async def follow(
        self, match_id: str, wait_s: float, silence_s: float = SILENCE_LIMIT_S
    ) -> AsyncIterator[spectate_pb2.MatchEvent]:
        """Events from the start until ``match_ended``; LookupError when the match does not
        appear within ``wait_s``, FeedSilent after ``silence_s`` without an event or when the
        match is evicted."""
        index = 0
        if match_id not in self.events:
            self.waiting[match_id] = self.waiting.get(match_id, 0) + 1
            try:
                await asyncio.wait_for(self._signal(match_id).wait(), wait_s)
            except TimeoutError:
                raise LookupError(f"no match {match_id!r}") from None
            finally:  # the last follower of a match that never came takes its signal along
                self.waiting[match_id] -= 1
                if not self.waiting[match_id]:
                    del self.waiting[match_id]
                    if match_id not in self.events:
                        self.changed.pop(match_id, None)
        while True:
            events = self.events.get(match_id, [])
            while index < len(events):
                event = events[index]
                index += 1
                yield event
                if event.WhichOneof("event") == _END:
                    return
            if match_id not in self.events:
                raise FeedSilent(
                    f"match {match_id!r} was evicted from this process's event log "
                    f"(more than {self.max_matches} newer matches) before it ended"
                )
            try:
                await asyncio.wait_for(self._signal(match_id).wait(), silence_s)
            except TimeoutError:
                raise FeedSilent(f"match {match_id!r} produced no events for {silence_s:g} s") from None


class RedisEventLog:
    """Events in the Redis stream ``Keys.match_events(id)`` (field ``e``)."""

    def __init__(self, client: Any, keys: Keys | None = None) -> None:
        self.client = client  # redis.asyncio.Redis
        self.keys = keys or Keys()

    async def append(self, match_id: str, event: spectate_pb2.MatchEvent) -> None:
        await self.append_many(match_id, [event])

    async def append_many(self, match_id: str, events: list[spectate_pb2.MatchEvent]) -> None:
        """One round trip for the lot (in order). Every write caps the stream's length and renews its
        expiry, so no stream outlives its match by more than MATCH_EVENTS_TTL_S, whatever was lost."""
        key = self.keys.match_events(match_id)
        async with self.client.pipeline(transaction=False) as pipe:
            for event in events:
                pipe.xadd(key, {"e": event.SerializeToString()}, maxlen=MATCH_EVENTS_MAXLEN)
            pipe.expire(key, MATCH_EVENTS_TTL_S)
            await pipe.execute()

    async def existing(self, match_ids: list[str]) -> set[str]:
        """One round trip for all of them."""
        async with self.client.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.exists(self.keys.match_events(match_id))
            found = await pipe.execute()
        return {match_id for match_id, count in zip(match_ids, found, strict=True) if count}

    async def follow(
        self, match_id: str, wait_s: float, silence_s: float = SILENCE_LIMIT_S
    ) -> AsyncIterator[spectate_pb2.MatchEvent]:
        """As ``LocalEventLog.follow``: FeedSilent once no entry came for ``silence_s``."""
        key = self.keys.match_events(match_id)
        last = "0-0"
        loop = asyncio.get_running_loop()
        give_up = loop.time() + wait_s
        seen_any = False
        while True:
            # at most 1 s per read: a block longer than the client's socket timeout would fail the read
            block_ms = min(max(1, int((give_up - loop.time()) * 1000)), 1000)
            answer = await self.client.xread({key: last}, count=100, block=block_ms)
            if not answer:
                if loop.time() >= give_up:
                    if not seen_any:
                        raise LookupError(f"no match {match_id!r}")
                    gone = "" if await self.client.exists(key) else " (its event stream is gone)"
                    raise FeedSilent(f"match {match_id!r} produced no events for {silence_s:g} s{gone}")
                continue
            give_up = loop.time() + silence_s
            for entry_id, fields in answer[0][1]:
                seen_any = True
                last = entry_id
                event = spectate_pb2.MatchEvent.FromString(fields[b"e"])
                yield event
                if event.WhichOneof("event") == _END:
                    return


class FeedWriter:
    """Writes one match's public events in order and in batches, off the decision path: the
    host hands events over and goes on; a writer task stores whatever has piled up. Best
    effort: a batch that cannot be stored (Redis away) is counted and dropped, and spectators
    see the gap in ``sequence``."""

    def __init__(self, log: EventLog, match_id: str) -> None:
        self.log = log
        self.match_id = match_id
        self.pending: list[spectate_pb2.MatchEvent] = []
        self.wake = asyncio.Event()
        self.closing = False
        self.lost = 0
        self.task = asyncio.create_task(self._run())

    def put(self, events: list[spectate_pb2.MatchEvent]) -> None:
        if events:
            self.pending.extend(events)
            self.wake.set()

    async def _run(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            batch, self.pending = self.pending, []
            if batch:
                try:
                    await self.log.append_many(self.match_id, batch)
                except Exception:
                    self.lost += len(batch)
            if self.closing and not self.pending:
                return

    async def close(self) -> int:
        """Store what is left; returns how many events were lost."""
        self.closing = True
        self.wake.set()
        await self.task
        return self.lost


class PublicFeed:
    """Builds the public events of one match from its state, step by step."""

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.sequence = 0
        self.hands_done = 0
        self.events_sent = 0
        self.tricks_sent = 0
        self.hand_announced = False

    def _event(self, **kind: Any) -> spectate_pb2.MatchEvent:
        event = spectate_pb2.MatchEvent(sequence=self.sequence, match_id=self.match_id, **kind)
        self.sequence += 1
        return event

    def started(self, seats: list[match_pb2.SeatInfo], rules: Any, time_control: Any) -> spectate_pb2.MatchEvent:
        return self._event(
            match_started=spectate_pb2.SpectateMatchStarted(
                match_id=self.match_id, seats=seats, rules=rules, time_control=time_control
            )
        )

    def fault(self, fault: match_pb2.Fault) -> spectate_pb2.MatchEvent:
        return self._event(fault=fault)

    def ended(self, ended: match_pb2.MatchEnded) -> spectate_pb2.MatchEvent:
        return self._event(match_ended=ended)

    def step(self, state: State) -> list[spectate_pb2.MatchEvent]:
        """The events made public since the last call."""
        out: list[spectate_pb2.MatchEvent] = []
        while self.hands_done < len(state.results):  # a hand finished: flush it from its result
            result = state.results[self.hands_done]
            self._hand_events(
                out,
                result.number,
                result.dealer,
                result.size,
                result.participants,
                result.trump_card,
                list(result.events),
                list(result.tricks),
                sealed=False,
            )
            out.append(self._event(hand_ended=hand_ended(self.match_id, state, self.hands_done)))
            self.hands_done += 1
            self.events_sent = self.tricks_sent = 0
            self.hand_announced = False
        if state.phase in (Phase.BID, Phase.PLAY) and state.hand_number > self.hands_done:
            sealed = state.phase == Phase.BID and state.rules.bidding is Bidding.BLIND and not state.rebid
            self._hand_events(
                out,
                state.hand_number,
                state.dealer,
                state.hand_size,
                state.order,
                state.trump_card,
                state.events,
                state.tricks,
                sealed,
            )
        return out

    def _hand_events(
        self,
        out: list[spectate_pb2.MatchEvent],
        number: int,
        dealer: int,
        size: int,
        participants: tuple[int, ...],
        trump: int,
        events: list[tuple[str, int, int]],
        tricks: list[Any],
        sealed: bool,
    ) -> None:
        if not self.hand_announced:
            started = spectate_pb2.HandStarted(
                hand_number=number, dealer=dealer, hand_size=size, participants=participants
            )
            if trump != NO_CARD:
                started.trump_card.CopyFrom(card_to_proto(trump))
            out.append(self._event(hand_started=started))
            self.hand_announced = True
        if sealed:
            return  # blind bids stay hidden until the reveal
        plays_seen = 0
        for index, (kind, seat, value) in enumerate(events):
            if kind == "play":
                plays_seen += 1
            if index < self.events_sent:
                continue
            if kind == "play":
                out.append(self._event(card_played=spectate_pb2.CardPlayed(seat=seat, card=card_to_proto(value))))
                if plays_seen % len(participants) == 0:
                    trick = tricks[plays_seen // len(participants) - 1]
                    out.append(self._event(trick_won=spectate_pb2.TrickWon(trick=trick_to_proto(trick))))
                    self.tricks_sent += 1
            else:
                out.append(self._event(bid_made=spectate_pb2.BidMade(seat=seat, bid=value, how=kind)))
        self.events_sent = len(events)


def hand_ended(match_id: str, state: State, index: int) -> match_pb2.HandEnded:
    """The result of the ``index``-th finished hand, with the running totals after it."""
    result: HandResult = state.results[index]
    totals = [sum(r.points[seat] for r in state.results[: index + 1]) for seat in range(len(result.points))]
    return match_pb2.HandEnded(
        match_id=match_id,
        hand_number=result.number,
        bids=result.bids,
        tricks_won=result.tricks_won,
        points=result.points,
        totals=totals,
    )
