"""The match record: a JSON document that replays a whole game without a random generator.

Schema (version 1) is documented in docs/record.md. Cards are written as text ("QS", "TH").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ohell.cards import NO_CARD, card_str, cards_of
from ohell.presets import preset_name
from ohell.state import HandResult, State

RECORD_FORMAT = "ohell-match-record"
RECORD_VERSION = 1


def final_winners(state: State, forfeited: Sequence[int] = ()) -> tuple[int, ...]:
    """Winners of a finished game; forfeited seats rank below every other seat."""
    if not forfeited:
        return state.winners
    standing = [s for s in range(state.game.num_players) if s not in forfeited]
    if not standing:
        return ()
    if all(s in standing for s in state.winners):
        return state.winners
    top = max(state.scores[s] for s in standing)
    return tuple(s for s in standing if state.scores[s] == top)


def hand_to_json(result: HandResult, totals: Sequence[int]) -> dict[str, Any]:
    return {
        "number": result.number,
        "dealer": result.dealer,
        "size": result.size,
        "sudden_death": result.sudden_death,
        "no_trump_hand": result.no_trump_hand,
        "deal": [[card_str(c) for c in cards_of(mask)] for mask in result.dealt],
        "trump": card_str(result.trump_card) if result.trump_card != NO_CARD else None,
        "events": [[kind, seat, card_str(value) if kind == "play" else value] for kind, seat, value in result.events],
        "tricks": [
            {"leader": t.leader, "cards": [card_str(c) for c in t.cards], "winner": t.winner} for t in result.tricks
        ],
        "bids": list(result.bids),
        "tricks_won": list(result.tricks_won),
        "points": list(result.points),
        "totals": list(totals),
    }


def build_record(
    state: State,
    seats: Sequence[dict[str, Any]],
    seed: int | None = None,
    match_id: str | None = None,
    faults: Sequence[dict[str, Any]] = (),
    forfeited: Sequence[int] = (),
) -> dict[str, Any]:
    """The record of a finished (or abandoned) game. ``seats[i]`` describes seat ``i``
    (at least a ``name``); ``faults`` lists what remote seats did wrong."""
    totals = [0] * state.game.num_players
    hands = []
    for result in state.results:
        for seat, points in enumerate(result.points):
            totals[seat] += points
        hands.append(hand_to_json(result, totals))
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "match_id": match_id,
        "preset": preset_name(state.game.rules),
        "rules": state.game.rules.to_dict(),
        "num_players": state.game.num_players,
        "seats": [dict(seat) for seat in seats],
        "seed": seed,
        "cuts": [
            {"seats": list(cutters), "cards": [card_str(c) for c in cards]} for cutters, cards in state.cut_rounds
        ],
        "hands": hands,
        "complete": state.is_terminal(),
        "totals": list(state.scores),
        "winners": list(final_winners(state, forfeited)) if state.is_terminal() else [],
        "faults": [dict(f) for f in faults],
        "forfeited": sorted(forfeited),
    }
