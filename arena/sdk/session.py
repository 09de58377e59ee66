"""One bot's side of its matches: AgentEvents in, Actions out.

An exception in the bot never ends the connection: it is logged with its traceback and the
Session answers the default legal action (what the platform itself plays after a fault) with
``Action.bot_error`` set, so the platform records a BOT_ERROR fault against the seat and the
match goes on. The traceback stays in the bot's own log: only the flag is sent (fault details
are public, and an exception's text may name the bot's cards).
"""

from __future__ import annotations

import logging
import reprlib
import time
from typing import Any

from arena.proto.ohell.v1 import match_pb2
from arena.sdk.reading import ObservationReader, legal_actions_of
from arena.wire import ConversionError, card_to_proto, fault_kind_name, rules_from_proto
from ohell.cards import card_str
from ohell.observation import Observation
from ohell.rules import Rules
from ohell.state import BID_BASE

log = logging.getLogger("arena.sdk")
ILLEGAL_LINE = "the bot chose %s on decision %d of match %s, which is not legal (legal: %s): an ILLEGAL fault"
# Matches whose rules, seat and decoder a Session keeps (the oldest are forgotten past it): a server
# that starts matches and never ends them cannot grow an agent's memory without bound.
MAX_OPEN_MATCHES = 1000
MAX_MATCH_ID = 1024  # characters: the platform's ids are under 100; longer is a server's garbage
MAX_LOGGED = 1000  # characters of each server value in a log line (7 seat names of 64 fit)
MAX_FAULT_LINES = 10  # a match's faults of the seat logged one a line (a seat forfeits after a few)


def printable(text: str) -> str:
    """``text`` with each control character (escape sequences, line breaks) as "?"."""
    return "".join(c if c.isprintable() else "?" for c in text)


class PrintableArgs(logging.Filter):
    """What the SDK logs of a server's text (seat names, match ids, notices, fault details) goes to
    the bot author's terminal: control characters (escape sequences, line breaks) become "?". The
    platform refuses such names, but an SDK may be pointed at any server."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_shown(arg) for arg in record.args)
        return True


def _shown(arg: Any) -> Any:
    """A log argument as the filter lets it through: text and lists (a server's totals: any number of
    them) printable and cut at MAX_LOGGED characters; numbers as they are, for %d."""
    if isinstance(arg, (list, tuple)):
        arg = str(arg)
    return printable(arg[:MAX_LOGGED]) if isinstance(arg, str) else arg


log.addFilter(PrintableArgs())


# What a bot class must define, as docs/protocol.md says it: the name and what it returns.
BOT_METHODS = {
    "bid": "bid(self, obs) -> int (a number of tricks from obs.legal_bids)",
    "play": "play(self, obs) -> int (a card 0..51 from obs.legal_actions)",
}


def not_overridden(bot: Any, method: str) -> NotImplementedError:
    return NotImplementedError(f"{type(bot).__name__} does not define {BOT_METHODS[method]}")


class BaseBot:
    """Subclass and override ``bid`` (return tricks) and ``play`` (return a card 0..51)."""

    name = "agent"

    def bid(self, observation: Observation) -> int:
        raise not_overridden(self, "bid")

    def play(self, observation: Observation) -> int:
        raise not_overridden(self, "play")

    def change_bid(self, observation: Observation) -> int | None:
        """Under 000's bid changes (``rules.bid_changes``), called once right after each of your
        bids: return a new bid from ``observation.legal_bids``, or None to keep yours
        (``observation.bids[observation.seat]``). Override it to be asked; bots that do not are
        never asked."""
        return None

    def on_event(self, event: match_pb2.AgentEvent) -> None:
        """Every event (match start, hand and match results, notices); override to watch."""


def missing_bot_methods(bot_class: type) -> list[str]:
    """The methods of ``BOT_METHODS`` that ``bot_class`` lacks or leaves to ``BaseBot``."""
    return [
        name
        for name in BOT_METHODS
        if not callable(getattr(bot_class, name, None)) or getattr(bot_class, name) is getattr(BaseBot, name)
    ]


def wants_bid_changes(bot: Any) -> bool:
    """Whether ``bot`` defines its own ``change_bid`` (so it asks to be offered bid changes)."""
    method = getattr(type(bot), "change_bid", None)
    return callable(method) and method is not BaseBot.change_bid


class Session:
    """Turns AgentEvents into Actions for one bot (any number of matches at once). ``timings``:
    keep every decision's time in seconds (``ohell bot check``); ``errors`` counts the bot's
    exceptions, ``illegal`` its answers outside the legal ones."""

    def __init__(self, bot: Any, timings: list[float] | None = None) -> None:
        self.bot = bot
        self.rules: dict[str, Rules] = {}
        self.seats: dict[str, int] = {}
        self.readers: dict[str, ObservationReader] = {}  # match id -> its decoder (keeps the hand's fixed parts)
        self.matches_ended = 0
        self.agent_id = ""  # as the gateway named it on connecting
        self.errors = 0
        self.illegal = 0
        self.timings = timings
        self.offers_changes = wants_bid_changes(bot)

    def handle(self, event: match_pb2.AgentEvent) -> match_pb2.Action | None:
        kind = event.WhichOneof("event")
        if kind == "decision":
            return self.decide(event.decision)
        if kind == "match_started":
            started = event.match_started
            check_match_id(started.match_id)
            self.rules[started.match_id] = rules_from_proto(started.rules)
            self.seats[started.match_id] = started.seat
            self.readers.pop(started.match_id, None)  # decode with these rules from now on
            self._forget_oldest()
            names = ", ".join(seat.name for seat in started.seats)
            log.info("match %s started: you sit in seat %d of %s", started.match_id, started.seat, names)
        elif kind == "match_ended":
            played = self.log_result(event.match_ended)
            self.rules.pop(event.match_ended.match_id, None)
            self.readers.pop(event.match_ended.match_id, None)
            self.matches_ended += played  # not the end of one begun before this process: --matches 1 stopped at it
        elif kind == "notice":
            log.warning("the platform did not use an action: %s %s", event.notice.code, event.notice.message)
        if hasattr(self.bot, "on_event"):
            try:
                self.bot.on_event(event)
            except Exception:
                log.exception("the bot's on_event raised (ignored)")
        return None

    def _forget_oldest(self) -> None:
        for table in (self.rules, self.seats, self.readers):
            while len(table) > MAX_OPEN_MATCHES:
                del table[next(iter(table))]

    def log_result(self, ended: match_pb2.MatchEnded) -> bool:
        """Log the end of a match; False when this session knows no seat of it (a bot started again
        while its last match went on hears that match end, and was told 'seat -1, placed 0, 0
        fault(s)' of a match it may have forfeited)."""
        seat = self.seats.pop(ended.match_id, -1)
        totals = list(ended.totals)
        if seat < 0:
            log.info(
                "match %s %s: totals %s; it began before this process connected, so your seat and faults in it are"
                " not known here (see its record)",
                ended.match_id,
                "was aborted before its end" if ended.aborted else "ended",
                totals,
            )
            return False
        mine = [f for f in ended.faults if f.seat == seat]
        place = 1 + sum(total > totals[seat] for total in totals) if 0 <= seat < len(totals) else 0
        log.info(
            "match %s %s: totals %s, you (seat %d) placed %d of %d%s, %d fault(s) of yours%s",
            ended.match_id,
            "was aborted before its end" if ended.aborted else "ended",
            totals,
            seat,
            place,
            len(totals),
            " and won" if seat in ended.winners else "",
            len(mine),
            ", FORFEITED" if seat in ended.forfeited else "",
        )
        for fault in mine[:MAX_FAULT_LINES]:
            log.info("  fault in hand %d: %s %s", fault.hand, fault_kind_name(fault.kind), fault.detail)
        if len(mine) > MAX_FAULT_LINES:
            log.info("  and %d more faults of yours (see the match's record)", len(mine) - MAX_FAULT_LINES)
        return True

    def decide(self, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        match_id, kind = request.match_id, request.kind  # each read of a upb field looks it up by name
        reader = self.readers.get(match_id)
        if reader is None:
            check_match_id(match_id)
            self.seats.setdefault(match_id, request.seat)  # a match begun before this process: its start unseen
            reader = self.readers[match_id] = ObservationReader(self.rules.get(match_id) or Rules())
            self._forget_oldest()
        rules = reader.rules
        legal = legal_actions_of(request)
        if not legal:  # the bot could not answer, nor the SDK default for it
            raise ConversionError(f"decision {request.decision_id} offers no legal_bids or legal_cards")
        observation = reader.read(request.observation, legal)
        # the reader checked that bids holds one value for each seat, this seat's too
        if kind == match_pb2.DECISION_KIND_CHANGE_BID and observation.bids[observation.seat] < 0:
            raise ConversionError(f"observation.bids holds no bid of seat {observation.seat} to change")
        action = match_pb2.Action(match_id=match_id, seat=request.seat, decision_id=request.decision_id)
        began = time.perf_counter() if self.timings is not None else 0.0
        try:
            choice = self.choose(kind, observation)
        except Exception:
            self.errors += 1
            log.exception(
                "the bot raised on decision %d of match %s (hand %d); answering the default action",
                request.decision_id,
                match_id,
                observation.hand_number,
            )
            action.bot_error = True
            choice = self.fallback(kind, observation)
        if self.timings is not None:
            self.timings.append(time.perf_counter() - began)
        if choice not in legal:
            self.illegal += 1
            log.warning(
                ILLEGAL_LINE,
                describe(choice),
                request.decision_id,
                match_id,
                ", ".join(describe(a) for a in legal),
            )
        if kind == match_pb2.DECISION_KIND_PLAY:
            action.card.CopyFrom(card_to_proto(choice))
        else:
            action.bid = choice - BID_BASE
            if kind == match_pb2.DECISION_KIND_BID:
                action.offer_change = self.offers_changes and rules.bid_changes
        return action

    def choose(self, kind: int, observation: Observation) -> int:
        """The bot's answer as an engine action number; ValueError when it is not even a card
        (0..51) or a number of tricks (0..17)."""
        if kind == match_pb2.DECISION_KIND_PLAY:
            card = whole_number(self.bot.play(observation), "play()", "a card is a number 0..51")
            if not 0 <= card < 52:
                raise ValueError(f"play() returned {card}: a card is a number 0..51")
            return card
        if kind == match_pb2.DECISION_KIND_CHANGE_BID:
            tricks = self.bot.change_bid(observation)
            tricks = observation.bids[observation.seat] if tricks is None else tricks
            tricks = whole_number(tricks, "change_bid()", "a bid is a number of tricks, 0..17, or None")
        else:
            tricks = whole_number(self.bot.bid(observation), "bid()", "a bid is a number of tricks, 0..17")
        if not 0 <= tricks <= 17:
            raise ValueError(f"the bot bid {tricks}: a bid is a number of tricks, 0..17")
        return BID_BASE + tricks

    @staticmethod
    def fallback(kind: int, observation: Observation) -> int:
        """The platform's default action (the lowest legal bid or card); keep the bid on a change."""
        if kind == match_pb2.DECISION_KIND_CHANGE_BID:
            return BID_BASE + observation.bids[observation.seat]
        return min(observation.legal_actions)


def check_match_id(match_id: str) -> None:
    """ConversionError for a match id too long to be the platform's (it would be kept as a key)."""
    if len(match_id) > MAX_MATCH_ID:
        raise ConversionError(f"match_id of {len(match_id)} characters, over {MAX_MATCH_ID}")


def whole_number(answer: Any, method: str, expected: str) -> int:
    """The bot's answer as an int; a ValueError naming what it returned when it is no number (int()'s
    own "invalid literal for int() with base 10: 'AS'" named neither the method nor what was wanted)."""
    try:
        return int(answer)
    except (TypeError, ValueError):
        raise ValueError(f"{method} returned {reprlib.repr(answer)}: {expected}") from None


def describe(action: int) -> str:
    if 0 <= action < 52:
        return card_str(action)
    return f"bid {action - BID_BASE}"
