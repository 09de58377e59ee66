"""The match host: plays one whole match with seats of any kind and returns its JSON record.

    record = await host_match("m1", preset("classic"), [SeatSpec.builtin("heuristic"),
                              SeatSpec.connected("agent-7"), SeatSpec.endpoint("10.0.0.5:7000"),
                              SeatSpec.builtin("random")], seed=42, redis_url=REDIS_URL)
    record = host_match_sync(...)          # the same, for Celery tasks (runs its own loop)

Time control: each decision may take ``decision_ms``; beyond that the seat's time bank pays,
and past both the decision is a TIMEOUT. A fault (TIMEOUT, ILLEGAL, GARBAGE, DISCONNECTED) plays
``State.default_action()`` for the seat (bid 0, or the lowest legal bid; the lowest legal card)
and is recorded; after ``max_faults`` faults the seat forfeits and plays default actions to the
end without being asked. The match always finishes. An agent whose own code failed says so
(``Action.bot_error``) and sends its SDK's fallback: a BOT_ERROR fault, recorded but not counted
toward ``max_faults``. Under 000's bid changes a seat that asked (``Action.offer_change``) gets one
DECISION_KIND_CHANGE_BID decision after its bid.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

from arena.keys import Keys
from arena.play import metrics
from arena.play.decisions import Decisions
from arena.play.events import EventLog, FeedWriter, LocalEventLog, PublicFeed, RedisEventLog, hand_ended
from arena.play.players import ConnectedPlayer, EndpointPlayer
from arena.play.relay import HostLink
from arena.play.specs import SeatSpec, SeatSpecError, TimeControl
from arena.proto.ohell.v1 import match_pb2
from arena.wire import DecisionWriter, fault_to_proto, rules_to_proto
from ohell.bots import make_bot
from ohell.record import build_record, final_winners
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from ohell.state import Game, Phase, State

_LOCAL_EVENTS = LocalEventLog()  # spectate log of matches hosted in this process without Redis


def local_events() -> LocalEventLog:
    """The spectate log of matches hosted in this process without Redis."""
    return _LOCAL_EVENTS


class _Match(Decisions):
    def __init__(
        self,
        match_id: str,
        rules: Rules,
        seats: Sequence[SeatSpec],
        seed: int,
        time_control: TimeControl,
        link: HostLink,
        log: EventLog | None,
        bot_executor: Executor | None = None,
        chance: Callable[[State], None] | None = None,
        bot_seeds: Sequence[int] | None = None,
    ) -> None:
        self.match_id = match_id
        self.bot_executor = bot_executor
        self.specs = list(seats)
        self.seed = seed
        self.chance = chance
        self.tc = time_control
        self.link = link
        self.state: State = Game(rules, len(seats)).new_state()
        self.rules_message = rules_to_proto(rules)
        self.requests = DecisionWriter(match_id)
        self.feed = PublicFeed(match_id)
        n = len(seats)
        self.bank_ms = [float(time_control.time_bank_ms)] * n
        self.fault_count = [0] * n
        self.faults: list[dict[str, Any]] = []  # full details: the offending seat and the record
        self.public_faults: list[dict[str, Any]] = []  # what other seats and spectators see
        self.forfeited: set[int] = set()
        self.decisions = 0
        self.fault_events: list[Any] = []
        self.change_offer = -1  # a seat that asked to be offered a change of the bid it just made
        self.writer = FeedWriter(log, match_id) if log is not None else None
        self.players: list[Any] = []
        for seat, spec in enumerate(seats):
            if spec.kind == "builtin":
                self.players.append(make_bot(spec.bot, bot_seeds[seat] if bot_seeds else seed * 31 + seat))
            elif spec.kind == "connected":
                self.players.append(ConnectedPlayer(spec.agent_id, link))
            else:
                self.players.append(EndpointPlayer(spec.address, spec.token))

    def remote(self) -> list[tuple[int, Any]]:
        return [(seat, p) for seat, p in enumerate(self.players) if self.specs[seat].kind != "builtin"]

    def publish(self, events: list[Any]) -> None:
        if self.writer is not None:
            self.writer.put(events)

    async def run(self) -> dict[str, Any]:
        seat_infos = [match_pb2.SeatInfo(seat=s, name=spec.name, kind=spec.kind) for s, spec in enumerate(self.specs)]
        tc = self.tc.to_proto()
        self.publish([self.feed.started(seat_infos, self.rules_message, tc)])
        rng = random.Random(self.seed)
        state = self.state
        hands_told = 0
        try:  # from the opening on: whatever fails, the players and the feed writer are closed
            await asyncio.gather(
                *(
                    player.open(
                        match_pb2.MatchStarted(
                            match_id=self.match_id,
                            seat=seat,
                            seats=seat_infos,
                            rules=self.rules_message,
                            time_control=tc,
                        )
                    )
                    for seat, player in self.remote()
                )
            )
            while state.phase != Phase.GAME_OVER:
                if state.phase <= Phase.DEAL:
                    state.chance_random(rng) if self.chance is None else self.chance(state)
                else:
                    seat = state.current
                    state.apply_action(await self.decide(seat))
                    if self.change_offer >= 0:
                        await self.offer_change(self.change_offer)
                if self.writer is not None:
                    self.publish([*self.fault_events, *self.feed.step(state)])
                    self.fault_events.clear()
                while hands_told < len(state.results):
                    await self.tell_hand(hands_told)
                    hands_told += 1
            return await self.finish(seat_infos)
        except asyncio.CancelledError:
            # its own task, so the rest of this cancellation cannot cut the news short
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(asyncio.create_task(self.abort()))
            raise
        finally:
            await asyncio.gather(*(player.close() for _, player in self.remote()), return_exceptions=True)
            if self.writer is not None:
                metrics.SPECTATE_EVENTS_LOST.inc(await self.writer.close())

    async def tell_hand(self, index: int) -> None:
        event = match_pb2.AgentEvent(hand_ended=hand_ended(self.match_id, self.state, index))
        await asyncio.gather(*(player.notify(event) for _, player in self.remote()))

    def ended(self, seat: int | None, aborted: bool = False) -> match_pb2.MatchEnded:
        """MatchEnded as ``seat`` may see it: full details of its own faults, public ones of others."""
        state = self.state
        pairs = zip(self.faults, self.public_faults, strict=True)
        faults = [full if full["seat"] == seat else public for full, public in pairs]
        return match_pb2.MatchEnded(
            match_id=self.match_id,
            totals=state.scores,
            winners=[] if aborted else final_winners(state, sorted(self.forfeited)),
            forfeited=sorted(self.forfeited),
            faults=[fault_to_proto(f) for f in faults],
            aborted=aborted,
        )

    async def abort(self) -> None:
        """The match stops unfinished: remote seats (whose gateways then drop its pending decision and
        start) and spectators get a MatchEnded with ``aborted`` set."""
        self.publish([*self.fault_events, self.feed.ended(self.ended(None, aborted=True))])
        self.fault_events.clear()
        await asyncio.gather(
            *(
                player.notify(match_pb2.AgentEvent(match_ended=self.ended(seat, aborted=True)))
                for seat, player in self.remote()
            ),
            return_exceptions=True,
        )

    async def finish(self, seat_infos: list[match_pb2.SeatInfo]) -> dict[str, Any]:
        state = self.state
        await asyncio.gather(
            *(player.notify(match_pb2.AgentEvent(match_ended=self.ended(seat))) for seat, player in self.remote())
        )
        self.publish([self.feed.ended(self.ended(None))])
        return build_record(
            state,
            [spec.record_entry() for spec in self.specs],
            self.seed,
            self.match_id,
            self.faults,
            sorted(self.forfeited),
        )


def check_seats(seats: Sequence[SeatSpec]) -> None:
    if not MIN_PLAYERS <= len(seats) <= MAX_PLAYERS:
        raise SeatSpecError(f"seats: a match needs {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {len(seats)}")
    # A gateway knows a connected agent's seat by the match id its answers carry: one seat per agent.
    first_seat: dict[str, int] = {}
    for index, seat in enumerate(seats):
        if seat.kind != "connected":
            continue
        if seat.agent_id in first_seat:
            raise SeatSpecError(
                f"seats[{index}].agent_id: {seat.agent_id[:80]!r} already sits in seats[{first_seat[seat.agent_id]}]:"
                " a connected agent takes one seat of a match"
            )
        first_seat[seat.agent_id] = index


async def host_match(
    match_id: str,
    rules: Rules,
    seats: Sequence[SeatSpec],
    seed: int,
    *,
    time_control: TimeControl | None = None,
    redis_url: str | None = None,
    redis_client: Any | None = None,
    keys: Keys | None = None,
    spectate: bool = True,
    bot_executor: Executor | None = None,
    chance: Callable[[State], None] | None = None,
    bot_seeds: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Play a whole match and return its record (``ohell.record.build_record``: seats, faults
    with seat/hand/kind/detail, forfeited). Connected seats are reached through gateways in this
    process, else through Redis (``redis_url`` or an open ``redis.asyncio`` client). Public
    events go to the match's Redis stream, or to this process's ``local_events()`` without Redis.
    ``chance``, when given, resolves each cut and deal instead of ``seed`` (cards dealt in advance);
    ``bot_seeds[s]``, when given, seeds the built-in bot in seat ``s`` (else ``seed`` does)."""
    check_seats(seats)
    if bot_seeds is not None and len(bot_seeds) != len(seats):
        raise ValueError(f"bot_seeds: {len(bot_seeds)} given for {len(seats)} seats")
    client = redis_client
    own_client = None
    if client is None and redis_url:
        import redis.asyncio as aioredis

        client = own_client = aioredis.Redis.from_url(redis_url)
    keys = keys or Keys.from_env()
    link = HostLink(client, keys)
    log: EventLog | None = None
    if spectate:
        log = RedisEventLog(client, keys) if client is not None else local_events()
    if any(seat.kind == "connected" for seat in seats):
        await link.start()  # replies from gateways elsewhere come to this host's channel
    metrics.MATCHES_HOSTED.inc()
    try:
        match = _Match(
            match_id, rules, seats, seed, time_control or TimeControl(), link, log, bot_executor, chance, bot_seeds
        )
        return await match.run()
    finally:
        await link.close()
        if own_client is not None:
            await own_client.aclose()


def host_match_sync(
    match_id: str, rules: Rules, seats: Sequence[SeatSpec], seed: int, **options: Any
) -> dict[str, Any]:
    """``host_match`` for synchronous callers (Celery tasks): runs its own event loop."""
    return asyncio.run(host_match(match_id, rules, seats, seed, **options))
