"""Replay a match record, verify every action and every recorded result.

``referee(record)`` never raises on bad input: a malformed record, an illegal action and a
result that does not follow from the actions are all reported in the returned verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from ohell.cards import CardError, parse_card
from ohell.errors import OhHellError
from ohell.record import RECORD_FORMAT, RECORD_VERSION, final_winners, hand_to_json
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from ohell.state import BID_BASE, Game, Phase, State

RULE_FIELDS = tuple(f.name for f in fields(Rules))


class RecordError(OhHellError):
    """A record that is not well-formed; the message names the field."""


@dataclass
class Verdict:
    valid: bool
    totals: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    actions_checked: int = 0
    malformed: str | None = None  # what is wrong with the document
    illegal_index: int | None = None  # 0-based over all bids, changes and plays of the record
    illegal_hand: int | None = None
    illegal_reason: str | None = None
    mismatch: str | None = None  # a recorded result the actions do not produce

    def summary(self) -> str:
        if self.malformed:
            return f"malformed record: {self.malformed}"
        if self.illegal_index is not None:
            return f"illegal action #{self.illegal_index} (hand {self.illegal_hand}): {self.illegal_reason}"
        if self.mismatch:
            return f"inconsistent record: {self.mismatch}"
        winners = ", ".join(f"seat {s}" for s in self.winners)
        return f"valid: {self.actions_checked} actions checked; totals {self.totals}; winner(s): {winners}"


class _Illegal(Exception):
    def __init__(self, index: int, hand: int, reason: str) -> None:
        self.index, self.hand, self.reason = index, hand, reason


class _Mismatch(Exception):
    pass


def referee_text(text: str) -> Verdict:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:
        return Verdict(valid=False, malformed=f"not JSON: {error}")
    return referee(document)


def referee(record: object) -> Verdict:
    try:
        state, checked = _replay(record)
    except RecordError as error:
        return Verdict(valid=False, malformed=str(error))
    except _Illegal as illegal:
        return Verdict(
            valid=False, illegal_index=illegal.index, illegal_hand=illegal.hand,
            illegal_reason=illegal.reason, actions_checked=illegal.index,
        )  # fmt: skip
    except _Mismatch as mismatch:
        return Verdict(valid=False, mismatch=str(mismatch))
    assert isinstance(record, dict)
    forfeited = record.get("forfeited") or []
    return Verdict(
        valid=True, totals=list(state.scores),
        winners=list(final_winners(state, forfeited)), actions_checked=checked,
    )  # fmt: skip


def replay(record: object) -> State:
    """The final State of a valid record; raises RecordError or OhHellError otherwise."""
    try:
        return _replay(record)[0]
    except _Illegal as illegal:
        raise RecordError(f"illegal action #{illegal.index}: {illegal.reason}") from None
    except _Mismatch as mismatch:
        raise RecordError(str(mismatch)) from None


def _get(data: object, key: str, kind: type | tuple[type, ...], path: str) -> Any:
    if not isinstance(data, dict):
        raise RecordError(f"{path or 'record'} must be a JSON object")
    if key not in data:
        raise RecordError(f"{path + '.' if path else ''}{key} is missing")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise RecordError(f"{path + '.' if path else ''}{key} must be {names}, got {value!r:.60}")
    return value


def _card(text: object, path: str) -> int:
    try:
        if not isinstance(text, str):
            raise CardError(f"a card must be a string like 'QS', got {text!r:.30}")
        return parse_card(text)
    except CardError as error:
        raise RecordError(f"{path}: {error}") from None


def _seat_list(value: object, path: str) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise RecordError(f"{path} must be a list of seat numbers")
    return value


def _replay(record: object) -> tuple[State, int]:
    if not isinstance(record, dict):
        raise RecordError("record must be a JSON object")
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(f"format must be {RECORD_FORMAT!r}, got {record.get('format')!r:.60}")
    if record.get("version") != RECORD_VERSION:
        raise RecordError(f"version {record.get('version')!r:.20} is not supported (expected {RECORD_VERSION})")
    rules_data = _get(record, "rules", dict, "")
    missing = [name for name in RULE_FIELDS if name not in rules_data]
    if missing:
        raise RecordError(f"rules.{missing[0]} is missing (a record states every rule option)")
    try:
        rules = Rules.from_dict(rules_data)
    except OhHellError as error:
        raise RecordError(f"rules: {error}") from None
    num_players = _get(record, "num_players", int, "")
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise RecordError(f"num_players={num_players} must be from {MIN_PLAYERS} to {MAX_PLAYERS}")
    try:
        game = Game(rules, num_players)
    except OhHellError as error:
        raise RecordError(f"rules: {error}") from None
    seats = _get(record, "seats", list, "")
    if len(seats) != num_players:
        raise RecordError(f"seats lists {len(seats)} seats for a {num_players}-player game")
    state = game.new_state()
    for index, cut in enumerate(_get(record, "cuts", list, "")):
        path = f"cuts[{index}]"
        seats = _seat_list(_get(cut, "seats", list, path), f"{path}.seats")
        cards = [_card(c, f"{path}.cards") for c in _get(cut, "cards", list, path)]
        if state.phase != Phase.CUT:
            raise _Mismatch(f"{path}: no cut is pending, first dealer was already chosen")
        if tuple(seats) != state.cutters:
            raise _Mismatch(f"{path}.seats: {seats} cut, but {list(state.cutters)} should")
        try:
            state.cut(cards)
        except OhHellError as error:
            raise RecordError(f"{path}: {error}") from None
    checked = 0
    for index, hand in enumerate(_get(record, "hands", list, "")):
        checked = _replay_hand(state, hand, f"hands[{index}]", checked)
    if not state.is_terminal():
        where = "the cut" if state.phase == Phase.CUT else f"hand {state.hand_number}"
        raise _Mismatch(f"the record ends before the game does (at {where})")
    _expect(record.get("complete"), True, "complete")
    _expect(record.get("totals"), list(state.scores), "totals")
    forfeited = record.get("forfeited") or []
    _seat_list(forfeited, "forfeited")
    _expect(record.get("winners"), list(final_winners(state, forfeited)), "winners")
    return state, checked


def _replay_hand(state: State, hand: object, path: str, checked: int) -> int:
    if not isinstance(hand, dict):
        raise RecordError(f"{path} must be a JSON object")
    if state.phase != Phase.DEAL:
        raise _Mismatch(f"{path}: the game has already ended" if state.is_terminal() else f"{path}: no deal pending")
    number = state.hand_number
    _expect(_get(hand, "dealer", int, path), state.dealer, f"{path}.dealer")
    _expect(_get(hand, "size", int, path), state.hand_size, f"{path}.size")
    deal = _get(hand, "deal", list, path)
    hands = []
    for seat, cards in enumerate(deal):
        if not isinstance(cards, list):
            raise RecordError(f"{path}.deal[{seat}] must be a list of cards")
        hands.append([_card(c, f"{path}.deal[{seat}]") for c in cards])
    trump_text = _get(hand, "trump", (str, type(None)), path)
    trump = None if trump_text is None else _card(trump_text, f"{path}.trump")
    try:
        state.deal_hands(hands, trump)
    except OhHellError as error:
        raise RecordError(f"{path}.deal: {error}") from None
    for index, event in enumerate(_get(hand, "events", list, path)):
        epath = f"{path}.events[{index}]"
        if not isinstance(event, list) or len(event) != 3:
            raise RecordError(f"{epath} must be [kind, seat, value]")
        kind, seat, value = event
        if kind not in ("bid", "change", "rebid", "play"):
            raise RecordError(f"{epath}: kind {kind!r:.30} is not bid, change, rebid or play")
        if type(seat) is not int:
            raise RecordError(f"{epath}: seat {seat!r:.30} is not a seat number")
        try:
            if kind == "play":
                state.act(seat, _card(value, epath))
            else:
                if type(value) is not int:
                    raise RecordError(f"{epath}: bid {value!r:.30} is not a whole number")
                if kind == "change":
                    state.change_bid(seat, value)
                else:
                    if (kind == "rebid") != (state.phase == Phase.BID and state.rebid):
                        raise _Illegal(checked, number, f"seat {seat} cannot {kind} now")
                    state.bid(seat, value)
        except OhHellError as error:
            if isinstance(error, RecordError):
                raise
            raise _Illegal(checked, number, str(error)) from None
        checked += 1
        if state.phase in (Phase.DEAL, Phase.GAME_OVER) and index + 1 < len(hand["events"]):
            raise _Mismatch(f"{epath}: the hand is over but more events follow")
    if not state.results or state.results[-1].number != number:
        raise _Mismatch(f"{path}: the hand's events end before its last trick")
    result = state.results[-1]
    expected = hand_to_json(result, state.scores)
    for key in ("number", "sudden_death", "no_trump_hand", "tricks", "bids", "tricks_won", "points", "totals"):
        _expect(hand.get(key), expected[key], f"{path}.{key}")
    return checked


def _expect(recorded: object, actual: object, path: str) -> None:
    """The first value that differs, named down to its element (``hands[0].tricks[0].cards[1]``): a
    whole hand's tricks were quoted, the recorded ones cut at 80 characters and the played ones in
    full, leaving the reader to find the one card that differed."""
    if recorded == actual:
        return
    if isinstance(recorded, list) and isinstance(actual, list) and len(recorded) == len(actual):
        index = next(i for i, (mine, theirs) in enumerate(zip(recorded, actual, strict=True)) if mine != theirs)
        return _expect(recorded[index], actual[index], f"{path}[{index}]")
    if isinstance(recorded, dict) and isinstance(actual, dict) and recorded.keys() == actual.keys():
        key = next(k for k in actual if recorded[k] != actual[k])
        return _expect(recorded[key], actual[key], f"{path}.{key}")
    raise _Mismatch(f"{path} is recorded as {recorded!r:.80} but the play gives {actual!r:.80}")


__all__ = ["BID_BASE", "RecordError", "Verdict", "referee", "referee_text", "replay"]
