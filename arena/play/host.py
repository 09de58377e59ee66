"""The match host: plays one whole match with seats of any kind and returns its JSON record.

    record = await host_match("m1", preset("classic"), [SeatSpec.builtin("heuristic"),
                              SeatSpec.connected("agent-7"), SeatSpec.endpoint("10.0.0.5:7000"),
                              SeatSpec.builtin("random")], seed=42, redis_url=REDIS_URL)
    record = host_match_sync(...)          # the same, for Celery tasks (runs its own loop)

Time control: each decision may take ``decision_ms``; beyond that the seat's time bank pays,
and past both the decision is a TIMEOUT. A fault (TIMEOUT, ILLEGAL, GARBAGE, DISCONNECTED) plays
``State.default_action()`` for the seat (bid 0, or the lowest legal bid; the lowest legal card)
and is recorded; after ``max_faults`` faults the seat forfeits and plays default actions to the
end without being asked. The match always finishes.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from arena.keys import Keys
from arena.play import metrics
from arena.play.events import EventLog, FeedWriter, LocalEventLog, PublicFeed, RedisEventLog, hand_ended
from arena.play.players import ConnectedPlayer, EndpointPlayer
from arena.play.relay import HostLink, Reply
from arena.play.specs import SeatSpec, SeatSpecError, TimeControl
from arena.proto.ohell.v1 import match_pb2
from arena.wire import (
    ConversionError,
    ObservationWriter,
    action_number,
    card_to_proto,
    fault_to_proto,
    rules_to_proto,
)
from ohell.bots import make_bot
from ohell.errors import IllegalActionError
from ohell.observation import observe
from ohell.record import build_record, final_winners
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from ohell.state import BID_BASE, Game, Phase, State, describe_action

_LOCAL_EVENTS = LocalEventLog()  # spectate log of matches hosted in this process without Redis


def local_events() -> LocalEventLog:
    """The spectate log of matches hosted in this process without Redis."""
    return _LOCAL_EVENTS


class _Match:
    def __init__(
        self,
        match_id: str,
        rules: Rules,
        seats: Sequence[SeatSpec],
        seed: int,
        time_control: TimeControl,
        link: HostLink,
        log: EventLog | None,
        chance: Callable[[State], None] | None = None,
    ) -> None:
        self.match_id = match_id
        self.specs = list(seats)
        self.seed = seed
        self.chance = chance
        self.tc = time_control
        self.link = link
        self.state: State = Game(rules, len(seats)).new_state()
        self.rules_message = rules_to_proto(rules)
        self.observations = ObservationWriter()
        self.feed = PublicFeed(match_id)
        n = len(seats)
        self.bank_ms = [float(time_control.time_bank_ms)] * n
        self.fault_count = [0] * n
        self.faults: list[dict[str, Any]] = []
        self.forfeited: set[int] = set()
        self.decisions = 0
        self.fault_events: list[Any] = []
        self.writer = FeedWriter(log, match_id) if log is not None else None
        self.players: list[Any] = []
        for seat, spec in enumerate(seats):
            if spec.kind == "builtin":
                self.players.append(make_bot(spec.bot, seed * 31 + seat))
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
                if self.writer is not None:
                    self.publish([*self.fault_events, *self.feed.step(state)])
                    self.fault_events.clear()
                while hands_told < len(state.results):
                    await self.tell_hand(hands_told)
                    hands_told += 1
            return await self.finish(seat_infos)
        finally:
            await asyncio.gather(*(player.close() for _, player in self.remote()), return_exceptions=True)
            if self.writer is not None:
                metrics.SPECTATE_EVENTS_LOST.inc(await self.writer.close())

    async def tell_hand(self, index: int) -> None:
        event = match_pb2.AgentEvent(hand_ended=hand_ended(self.match_id, self.state, index))
        await asyncio.gather(*(player.notify(event) for _, player in self.remote()))

    async def finish(self, seat_infos: list[match_pb2.SeatInfo]) -> dict[str, Any]:
        state = self.state
        ended = match_pb2.MatchEnded(
            match_id=self.match_id,
            totals=state.scores,
            winners=final_winners(state, sorted(self.forfeited)),
            forfeited=sorted(self.forfeited),
            faults=[fault_to_proto(f) for f in self.faults],
        )
        await asyncio.gather(*(player.notify(match_pb2.AgentEvent(match_ended=ended)) for _, player in self.remote()))
        self.publish([self.feed.ended(ended)])
        return build_record(
            state,
            [spec.record_entry() for spec in self.specs],
            self.seed,
            self.match_id,
            self.faults,
            sorted(self.forfeited),
        )

    async def decide(self, seat: int) -> int:
        state = self.state
        spec = self.specs[seat]
        if seat in self.forfeited:
            return state.default_action()
        if spec.kind == "builtin":
            return self.builtin_action(seat)
        began = time.perf_counter()  # the round trip: building the request to checking the answer
        legal = state.legal_actions()
        bidding = state.phase == Phase.BID
        self.decisions += 1
        event = match_pb2.AgentEvent()
        request = event.decision
        request.match_id, request.seat, request.decision_id = self.match_id, seat, self.decisions
        request.kind = match_pb2.DECISION_KIND_BID if bidding else match_pb2.DECISION_KIND_PLAY
        self.observations.write(observe(state, seat), int(self.bank_ms[seat]), request.observation)
        request.deadline_ms = self.tc.decision_ms
        if bidding:
            request.legal_bids.extend([a - BID_BASE for a in legal])
        else:
            request.legal_cards.extend([card_to_proto(a) for a in legal])
        allowed_s = (self.tc.decision_ms + self.bank_ms[seat]) / 1000
        asked = time.perf_counter()
        try:
            reply = await self.players[seat].decide(event, allowed_s)
        except Exception as error:  # a transport failure we did not foresee is still a disconnect
            reply = Reply(undeliverable=f"{spec.kind} seat failed: {error!r}")
        elapsed_ms = (time.perf_counter() - asked) * 1000
        if elapsed_ms > self.tc.decision_ms:
            self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - (elapsed_ms - self.tc.decision_ms))
        action, kind, detail = self.judge(seat, request, reply, legal, allowed_s)
        metrics.observe_decision(spec.kind, time.perf_counter() - began)
        if kind is None:
            return action
        return self.fault(seat, kind, detail)

    def judge(
        self, seat: int, request: match_pb2.DecisionRequest, reply: Reply | None, legal: Sequence[int], allowed_s: float
    ) -> tuple[int, str | None, str]:
        if reply is None:
            self.bank_ms[seat] = 0.0
            return -1, "TIMEOUT", f"no action within {allowed_s * 1000:.0f} ms (decision {request.decision_id})"
        if reply.action is None:
            return -1, "DISCONNECTED", reply.undeliverable
        action = reply.action
        if action.seat != seat or action.match_id != self.match_id:
            return (
                -1,
                "GARBAGE",
                (
                    f"action for match {action.match_id!r} seat {action.seat}, "
                    f"expected match {self.match_id!r} seat {seat}"
                ),
            )
        try:
            number = action_number(action, request.kind)
        except ConversionError as error:
            return -1, "GARBAGE", str(error)
        if number in legal:
            return number, None, ""
        try:
            self.state.clone().apply_action(number)
            reason = f"{describe_action(number)} is not legal now"
        except IllegalActionError as error:
            reason = str(error)
        return -1, "ILLEGAL", reason

    def fault(self, seat: int, kind: str, detail: str) -> int:
        state = self.state
        self.faults.append({"seat": seat, "hand": state.hand_number, "kind": kind, "detail": detail})
        self.fault_count[seat] += 1
        metrics.observe_fault(self.specs[seat].kind, kind)
        if self.fault_count[seat] >= self.tc.max_faults:
            self.forfeited.add(seat)
        if self.writer is not None:  # published with the step's events, before the default action
            self.fault_events.append(self.feed.fault(fault_to_proto(self.faults[-1])))
        return state.default_action()

    def builtin_action(self, seat: int) -> int:
        state = self.state
        bot = self.players[seat]
        began = time.perf_counter()
        obs = observe(state, seat)
        try:
            action = BID_BASE + bot.bid(obs) if state.phase == Phase.BID else bot.play(obs)
        except Exception as error:  # a built-in bot must not fail; if it does, the match goes on
            return self.fault(seat, "ILLEGAL", f"built-in bot {self.specs[seat].bot!r} raised {error!r}")
        metrics.observe_decision("builtin", time.perf_counter() - began)
        if action not in state.legal_actions():
            return self.fault(seat, "ILLEGAL", f"built-in bot chose {describe_action(action)}")
        return action


def check_seats(seats: Sequence[SeatSpec]) -> None:
    if not MIN_PLAYERS <= len(seats) <= MAX_PLAYERS:
        raise SeatSpecError(f"a match needs {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {len(seats)}")


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
    chance: Callable[[State], None] | None = None,
) -> dict[str, Any]:
    """Play a whole match and return its record (``ohell.record.build_record``: seats, faults
    with seat/hand/kind/detail, forfeited). Connected seats are reached through gateways in this
    process, else through Redis (``redis_url`` or an open ``redis.asyncio`` client). Public
    events go to the match's Redis stream, or to this process's ``local_events()`` without Redis.
    ``chance``, when given, resolves each cut and deal instead of ``seed`` (cards dealt in advance)."""
    check_seats(seats)
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
        return await _Match(match_id, rules, seats, seed, time_control or TimeControl(), link, log, chance).run()
    finally:
        await link.close()
        if own_client is not None:
            await own_client.aclose()


def host_match_sync(
    match_id: str, rules: Rules, seats: Sequence[SeatSpec], seed: int, **options: Any
) -> dict[str, Any]:
    """``host_match`` for synchronous callers (Celery tasks): runs its own event loop."""
    return asyncio.run(host_match(match_id, rules, seats, seed, **options))
