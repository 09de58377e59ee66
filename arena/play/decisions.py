"""The match host's decisions: a mixin of the host's match (``arena.play.host``) that asks each
seat for its action under the time control, judges the answer, and records faults (with the public
detail other seats and spectators see, which names no hidden card)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from arena.play import metrics
from arena.play.events import FeedWriter, PublicFeed
from arena.play.relay import PLATFORM_FAULT, Decision, Reply
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import match_pb2
from arena.wire import ConversionError, DecisionWriter, action_number, fault_to_proto
from ohell.errors import IllegalActionError
from ohell.observation import observe
from ohell.state import BID_BASE, Phase, State, describe_action


class Decisions:
    """Asking, judging and faulting; the match's state is set up by the host's ``_Match``."""

    match_id: str
    state: State
    specs: list[SeatSpec]
    players: list[Any]
    bot_executor: Executor | None
    tc: TimeControl
    requests: DecisionWriter
    feed: PublicFeed
    writer: FeedWriter | None
    bank_ms: list[float]
    fault_count: list[int]
    faults: list[dict[str, Any]]
    public_faults: list[dict[str, Any]]
    forfeited: set[int]
    decisions: int
    fault_events: list[Any]
    change_offer: int

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
        decision_id = self.decisions
        forbidden = None
        if kind == match_pb2.DECISION_KIND_CHANGE_BID:  # the hook's forbidden bid, as on a bid
            missing = [t for t in range(state.hand_size + 1) if BID_BASE + t not in legal]
            forbidden = missing[0] if missing else -1
        data = self.requests.encode(
            seat,
            decision_id,
            kind,
            observe(state, seat),
            int(self.bank_ms[seat]),
            legal,
            self.tc.decision_ms,
            forbidden,
        )
        allowed_s = (self.tc.decision_ms + self.bank_ms[seat]) / 1000
        asked = time.perf_counter()
        try:
            reply = await self.players[seat].decide(Decision(self.match_id, seat, decision_id, data), allowed_s)
        except Exception as error:  # a transport failure we did not foresee is still a disconnect
            reply = Reply(undeliverable=f"{spec.kind} seat failed: {error!r}")
        elapsed_ms = (time.perf_counter() - asked) * 1000
        if elapsed_ms > self.tc.decision_ms:
            self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - (elapsed_ms - self.tc.decision_ms))
        action, fault_kind, detail = self.judge(seat, decision_id, kind, reply, legal, allowed_s)
        metrics.observe_decision(spec.kind, time.perf_counter() - began)
        answer = reply.action if reply is not None else None
        if fault_kind is not None:
            self.fault(seat, fault_kind, detail)
            return None, answer
        if answer is not None and answer.bot_error:
            self.record_fault(seat, "BOT_ERROR", f"the agent's code failed on decision {decision_id}", False)
        return action, answer

    def judge(
        self, seat: int, decision_id: int, kind: Any, reply: Reply | None, legal: Sequence[int], allowed_s: float
    ) -> tuple[int, str | None, str]:
        if reply is None:
            self.bank_ms[seat] = 0.0
            return -1, "TIMEOUT", f"no action within {allowed_s * 1000:.0f} ms (decision {decision_id})"
        if reply.action is None:
            return -1, "DISCONNECTED", reply.undeliverable
        action = reply.action
        if action.seat != seat or action.match_id != self.match_id:
            return (  # the detail goes into the record: an id quoted in full could make it any size
                -1,
                "GARBAGE",
                (
                    f"action for match {action.match_id[:80]!r} seat {action.seat}, "
                    f"expected match {self.match_id!r} seat {seat}"
                ),
            )
        try:
            number = action_number(action, kind)
        except ConversionError as error:
            return -1, "GARBAGE", str(error)
        if number in legal:
            return number, None, ""
        if kind == match_pb2.DECISION_KIND_CHANGE_BID:
            legal_bids = [a - BID_BASE for a in legal]
            return -1, "ILLEGAL", f"a change to {number - BID_BASE} is not one of legal_bids {legal_bids}"
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
