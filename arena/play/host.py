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
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

from arena.keys import Keys
from arena.play import metrics
from arena.play.events import EventLog, FeedWriter, LocalEventLog, PublicFeed, RedisEventLog, hand_ended
from arena.play.players import ConnectedPlayer, EndpointPlayer
from arena.play.relay import PLATFORM_FAULT, HostLink, Reply
from arena.play.specs import SeatSpec, SeatSpecError, TimeControl
from arena.proto.ohell.v1 import match_pb2
from arena.wire import (
    ConversionError,
    ObservationWriter,
    action_number,
    add_legal_cards,
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
        self.observations = ObservationWriter()
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
        finally:
            await asyncio.gather(*(player.close() for _, player in self.remote()), return_exceptions=True)
            if self.writer is not None:
                metrics.SPECTATE_EVENTS_LOST.inc(await self.writer.close())

    async def tell_hand(self, index: int) -> None:
        event = match_pb2.AgentEvent(hand_ended=hand_ended(self.match_id, self.state, index))
        await asyncio.gather(*(player.notify(event) for _, player in self.remote()))

    def ended(self, seat: int | None) -> match_pb2.MatchEnded:
        """MatchEnded as ``seat`` may see it: full details of its own faults, public ones of others."""
        state = self.state
        pairs = zip(self.faults, self.public_faults, strict=True)
        faults = [full if full["seat"] == seat else public for full, public in pairs]
        return match_pb2.MatchEnded(
            match_id=self.match_id,
            totals=state.scores,
            winners=final_winners(state, sorted(self.forfeited)),
            forfeited=sorted(self.forfeited),
            faults=[fault_to_proto(f) for f in faults],
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

    async def decide(self, seat: int) -> int:
        state = self.state
        if seat in self.forfeited:
            return state.default_action()
        if self.specs[seat].kind == "builtin":
            if self.bot_executor is not None:  # a service's event loop must not think for bots
                return await asyncio.get_running_loop().run_in_executor(self.bot_executor, self.builtin_action, seat)
            return self.builtin_action(seat)
        bidding = state.phase == Phase.BID
        kind = match_pb2.DECISION_KIND_BID if bidding else match_pb2.DECISION_KIND_PLAY
        action, answer = await self.ask(seat, kind, state.legal_actions())
        if action is None:
            return state.default_action()
        if bidding and answer is not None and answer.offer_change and state.rules.bid_changes:
            self.change_offer = seat
        return action

    async def offer_change(self, seat: int) -> None:
        """000: the seat that just bid asked to be offered a change before the next bid (the
        dealer: before the first lead); its answer keeps or replaces the bid."""
        self.change_offer = -1
        state = self.state
        if state.change_seat != seat or seat in self.forfeited:
            return
        options = [BID_BASE + tricks for tricks in state.change_options(seat)]
        action, _ = await self.ask(seat, match_pb2.DECISION_KIND_CHANGE_BID, options)
        if action is not None and action - BID_BASE != state.bids[seat]:
            state.change_bid(seat, action - BID_BASE)

    async def ask(self, seat: int, kind: Any, legal: Sequence[int]) -> tuple[int | None, match_pb2.Action | None]:
        """Ask a remote seat for a ``kind`` decision among ``legal``: the chosen action, or None
        after a fault (recorded here), and the agent's Action when one arrived."""
        state = self.state
        spec = self.specs[seat]
        began = time.perf_counter()  # the round trip: building the request to checking the answer
        self.decisions += 1
        event = match_pb2.AgentEvent()
        request = event.decision
        request.match_id, request.seat, request.decision_id = self.match_id, seat, self.decisions
        request.kind = kind
        self.observations.write(observe(state, seat), int(self.bank_ms[seat]), request.observation)
        request.deadline_ms = self.tc.decision_ms
        if kind == match_pb2.DECISION_KIND_PLAY:
            add_legal_cards(request, legal)
        else:
            request.legal_bids.extend([a - BID_BASE for a in legal])
        if kind == match_pb2.DECISION_KIND_CHANGE_BID:  # the hook's forbidden bid, as on a bid
            missing = [t for t in range(state.hand_size + 1) if BID_BASE + t not in legal]
            request.observation.forbidden_bid = missing[0] if missing else -1
        allowed_s = (self.tc.decision_ms + self.bank_ms[seat]) / 1000
        asked = time.perf_counter()
        try:
            reply = await self.players[seat].decide(event, allowed_s)
        except Exception as error:  # a transport failure we did not foresee is still a disconnect
            reply = Reply(undeliverable=f"{spec.kind} seat failed: {error!r}")
        elapsed_ms = (time.perf_counter() - asked) * 1000
        if elapsed_ms > self.tc.decision_ms:
            self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - (elapsed_ms - self.tc.decision_ms))
        action, fault_kind, detail = self.judge(seat, request, reply, legal, allowed_s)
        metrics.observe_decision(spec.kind, time.perf_counter() - began)
        answer = reply.action if reply is not None else None
        if fault_kind is not None:
            self.fault(seat, fault_kind, detail)
            return None, answer
        if answer is not None and answer.bot_error:
            self.record_fault(seat, "BOT_ERROR", f"the agent's code failed on decision {request.decision_id}", False)
        return action, answer

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
        if request.kind == match_pb2.DECISION_KIND_CHANGE_BID:
            return -1, "ILLEGAL", f"a change to {number - BID_BASE} is not one of legal_bids {list(request.legal_bids)}"
        try:
            self.state.clone().apply_action(number)
            reason = f"{describe_action(number)} is not legal now"
        except IllegalActionError as error:
            reason = str(error)
        return -1, "ILLEGAL", reason

    def fault(self, seat: int, kind: str, detail: str) -> int:
        self.record_fault(seat, kind, detail)
        return self.state.default_action()

    def record_fault(self, seat: int, kind: str, detail: str, counts: bool = True) -> None:
        """Record a fault; ``counts``: it counts toward ``max_faults`` (a BOT_ERROR does not). Others
        and spectators get the public detail, which names no hidden card."""
        state = self.state
        self.faults.append({"seat": seat, "hand": state.hand_number, "kind": kind, "detail": detail})
        public = public_detail(seat, kind, state.phase == Phase.BID, detail)
        self.public_faults.append({"seat": seat, "hand": state.hand_number, "kind": kind, "detail": public})
        metrics.observe_fault(self.specs[seat].kind, kind)
        if counts:
            self.fault_count[seat] += 1
            if self.fault_count[seat] >= self.tc.max_faults:
                self.forfeited.add(seat)
        if self.writer is not None:  # published with the step's events, before the default action
            self.fault_events.append(self.feed.fault(fault_to_proto(self.public_faults[-1])))

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


def public_detail(seat: int, kind: str, bidding: bool, detail: str) -> str:
    """A fault as other seats and spectators see it: the kind of mistake, never a card (the full
    detail can name the card tried and the cards held) nor a network error of an endpoint."""
    if kind == "TIMEOUT":
        return f"seat {seat} did not act in time"
    if kind == "ILLEGAL":
        return f"seat {seat} made an illegal {'bid' if bidding else 'play'}"
    if kind == "GARBAGE":
        return f"seat {seat} sent an action that is not for this decision or cannot be read"
    if kind == "BOT_ERROR":
        return f"seat {seat}'s own code failed; its SDK answered the default action"
    if detail.startswith(PLATFORM_FAULT):
        return f"seat {seat} could not be reached: the platform failed, not the agent"
    return f"seat {seat} is not connected"


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
