"""Points for one seat in one hand, under every scoring method of the rule documents."""

from __future__ import annotations

from ohell.rules import Scoring


def hand_score(*, method: Scoring, bid: int, tricks: int, cards_dealt: int, hand_number: int, vienna: bool) -> int:
    """Points for a seat that bid ``bid`` and took ``tricks`` in hand ``hand_number`` (1-based).
    Keyword-only: four of the arguments are ints that are easy to swap."""
    off = abs(tricks - bid)
    if off == 0 and bid == 0 and vienna:
        return cards_dealt + 5
    if method is Scoring.EXACT:
        return 10 + bid if off == 0 else 0
    if method is Scoring.POSITIVE:
        return 10 + tricks if off == 0 else tricks
    if method is Scoring.NEGATIVE:
        return 10 if off == 0 else -10 * off
    if method is Scoring.BALANCED:
        return 10 + bid if off == 0 else -2 * off
    if method is Scoring.HYBRID:
        if off == 0:
            return 10 + bid
        return tricks if tricks < bid else 0
    if method is Scoring.DOUBLES:
        return 10 + 2 * bid if off == 0 else -2 * off
    if method is Scoring.TRIPLES:
        return 10 + 3 * bid if off == 0 else -3 * off
    if method is Scoring.SQUARES:
        return 10 + bid * bid if off == 0 else -off * off
    if method is Scoring.ANDERSON:
        trick_value = 10 * hand_number
        return trick_value * bid if off == 0 else -trick_value * off
    if method is Scoring.CONTRACT_WHIST:
        if off == 0:
            return tricks
        return -(tricks - bid) if tricks > bid else -2 * (bid - tricks)
    if method is Scoring.CONSOLATION:
        return (10 + bid if off == 0 else 0) + tricks
    raise AssertionError(f"unhandled scoring method {method!r}")
