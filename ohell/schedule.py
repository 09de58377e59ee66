"""The sequence of hand sizes, and which hands are played without trumps."""

from __future__ import annotations

from ohell.errors import RulesError
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Direction, Rules


def hand_sizes(rules: Rules, num_players: int) -> tuple[int, ...]:
    """Cards per player for every scheduled hand, in order.

    With rebound the turning size is played once: 10..1..10 plays a single 1-card hand
    (000), 1..13..1 a single 13-card hand (003).
    """
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise RulesError(f"num_players={num_players} must be from {MIN_PLAYERS} to {MAX_PLAYERS}")
    deck_limit = 52 // num_players
    if rules.hand_sizes is not None:
        too_big = [size for size in rules.hand_sizes if size > deck_limit]
        if too_big:
            raise RulesError(
                f"hand_sizes: a hand of {too_big[0]} cards, more than the {deck_limit} a deck gives each"
                f" of {num_players} players"
            )
        return rules.hand_sizes
    top = rules.max_hand_size(num_players)
    bottom = rules.min_cards
    if bottom > top:
        raise RulesError(f"min_cards={bottom} exceeds the largest hand ({top}) for {num_players} players")
    down = tuple(range(top, bottom - 1, -1))
    up = tuple(range(bottom, top + 1))
    first, second = (down, up) if rules.direction is Direction.DOWN else (up, down)
    return first + second[1:] if rules.rebound else first


def no_trump_hand(rules: Rules, hand_number: int) -> bool:
    """True when hand ``hand_number`` (1-based) is a designated no-trump hand."""
    return rules.no_trump_every > 0 and hand_number % rules.no_trump_every == 0
