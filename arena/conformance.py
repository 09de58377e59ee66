"""Play the same hands through our engine and OpenSpiel's ``oh_hell``, and report every disagreement.

OpenSpiel (PyPI ``open-spiel``, a test extra) plays one hand per game. What we rely on about it is
read from the game itself when a table is built, and checked again on every hand:

- chance nodes come in this order: the number of tricks (action ``k`` means ``k`` tricks, from 1 to
  ``51 // players``, so a trump card is always left to turn), the dealer (action ``d`` is seat
  ``d``), one node per card dealt, then the trump card;
- card ``i`` of the deal goes to player ``i % players`` (player 0 first, not the dealer's left, so
  the same deck gives different hands than ours: we force hands, not a deck);
- its card actions are numbered differently from ours; the map comes from ``action_to_string``
  (suit letter then rank, e.g. ``"HA"``) and its bid actions from their strings (the bid count);
- it scores ``tricks + 10`` for an exact bid and ``tricks`` otherwise, so an exact hit is
  ``return - tricks == 10``.

Our side is a ``Rules(hand_sizes=(k,))`` game whose cut makes OpenSpiel's dealer deal first
(``State.choose_dealer``). The card map read from OpenSpiel here is an independent check of the
engine's own conversion, ``ohell.hand.openspiel_action`` (tests/engine/test_conformance.py).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from ohell.cards import NUM_CARDS, card_str, parse_card
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from ohell.state import BID_BASE, Game, Phase, State, describe_action

EXACT_BONUS = 10  # OpenSpiel's return for an exact bid, over the tricks taken
_HAND_LINE = re.compile(r"^\s+([CDSH]): ([2-9TJQKA]*)\s*$")


class ConformanceUnavailable(RuntimeError):
    """OpenSpiel is not installed."""


def load_pyspiel() -> ModuleType:
    try:
        import pyspiel
    except ImportError as error:
        raise ConformanceUnavailable(
            "conformance needs OpenSpiel: install the test extra (pip install -e '.[test]') "
            f"or 'pip install open-spiel' ({error})"
        ) from None
    return pyspiel


def _parse_os_card(text: str) -> int:
    """OpenSpiel writes suit then rank (``"HA"``); ours is rank then suit."""
    text = text.strip()
    if len(text) != 2:
        raise ValueError(f"unexpected OpenSpiel card string {text!r}")
    return parse_card(text[1] + text[0])


@dataclass
class OpenSpielTable:
    """OpenSpiel's game for one table size, with its action numbering mapped to ours."""

    pyspiel: ModuleType
    num_players: int
    rules: Rules = field(default_factory=Rules)  # ours; its hand sizes are replaced per hand
    game: Any = None
    max_tricks: int = 0
    to_ours: dict[int, int] = field(default_factory=dict)  # OpenSpiel action -> our action
    to_os: dict[int, int] = field(default_factory=dict)
    _ours: dict[int, Game] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.game = self.pyspiel.load_game("oh_hell", {"players": self.num_players})
        state = self.game.new_initial_state()
        trick_counts = [a for a, _ in state.chance_outcomes()]
        self.max_tricks = max(trick_counts)
        if trick_counts != list(range(1, self.max_tricks + 1)):
            raise ValueError(f"unexpected OpenSpiel trick-count outcomes {trick_counts}")
        state.apply_action(self.max_tricks)
        state.apply_action(0)  # dealer
        chance = self.pyspiel.PlayerId.CHANCE
        for action, _ in state.chance_outcomes():
            self.to_ours[action] = _parse_os_card(state.action_to_string(chance, action))
        if sorted(self.to_ours.values()) != list(range(NUM_CARDS)):
            raise ValueError("OpenSpiel's card actions do not map one-to-one onto 52 cards")
        while state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        for action in state.legal_actions():  # the first bidder may bid 0..max_tricks
            self.to_ours[action] = BID_BASE + int(state.action_to_string(state.current_player(), action))
        self.to_os = {ours: os_action for os_action, ours in self.to_ours.items()}

    def ours(self, hand_size: int) -> Game:
        if hand_size not in self._ours:
            self._ours[hand_size] = Game(replace(self.rules, hand_sizes=(hand_size,)), self.num_players)
        return self._ours[hand_size]


def _os_hands(text: str, num_players: int) -> list[set[int]]:
    """Each player's cards from OpenSpiel's state string (``Player: p`` then one line per suit)."""
    hands: list[set[int]] = [set() for _ in range(num_players)]
    player = -1
    for line in text.splitlines():
        if line.startswith("Player: "):
            player = int(line.split()[1])
            continue
        match = _HAND_LINE.match(line)
        if match and 0 <= player < num_players:
            hands[player].update(parse_card(rank + match.group(1)) for rank in match.group(2))
    return hands


def _os_row(text: str, label: str) -> list[int]:
    match = re.search(rf"^{label}:\s+(.*)$", text, re.MULTILINE)
    if not match:
        raise ValueError(f"OpenSpiel's state string has no {label!r} line")
    return [int(v) for v in match.group(1).split()]


def play_hand(table: OpenSpielTable, hand_size: int, dealer: int, rng: random.Random) -> list[str]:
    """Deal one random hand to both engines, play random legal actions, return disagreements.

    Play stops at the first disagreement in turn or legal actions (later steps would not compare
    like with like); the end-of-hand comparison then is skipped.
    """
    n = table.num_players
    where = f"players={n} tricks={hand_size} dealer={dealer}"
    deck = rng.sample(range(NUM_CARDS), n * hand_size + 1)
    hands = [deck[seat * hand_size : (seat + 1) * hand_size] for seat in range(n)]
    trump = deck[-1]

    theirs = table.game.new_initial_state()
    theirs.apply_action(hand_size)
    theirs.apply_action(dealer)
    for index in range(n * hand_size):
        theirs.apply_action(table.to_os[hands[index % n][index // n]])
    theirs.apply_action(table.to_os[trump])

    ours = table.ours(hand_size).new_state()
    ours.choose_dealer(dealer)
    if ours.dealer != dealer:
        return [f"{where}: our cut chose dealer {ours.dealer}"]
    ours.deal_hands(hands, trump)

    text = str(theirs)
    if _os_hands(text, n) != [set(h) for h in hands] or f"Trump: {card_str(trump)[::-1]}" not in text:
        return [f"{where}: OpenSpiel did not receive the forced deal (hands or trump differ)"]

    os_winners: list[int] = []
    plays = 0
    step = 0
    while not theirs.is_terminal():
        step += 1
        if ours.phase == Phase.GAME_OVER:
            return [f"{where} step {step}: our hand ended, OpenSpiel's goes on"]
        if theirs.current_player() != ours.current:
            return [f"{where} step {step}: OpenSpiel's turn is {theirs.current_player()}, ours {ours.current}"]
        their_legal = {table.to_ours[a] for a in theirs.legal_actions()}
        our_legal = set(ours.legal_actions())
        if their_legal != our_legal:
            only_theirs = sorted(describe_action(a) for a in their_legal - our_legal)
            only_ours = sorted(describe_action(a) for a in our_legal - their_legal)
            return [
                f"{where} step {step} seat {ours.current}: legal actions differ; "
                f"only OpenSpiel allows {only_theirs}, only ours allows {only_ours}"
            ]
        action = rng.choice(sorted(our_legal))
        theirs.apply_action(table.to_os[action])
        ours.apply_action(action)
        if action < NUM_CARDS:
            plays += 1
            if plays % n == 0 and not theirs.is_terminal():
                os_winners.append(theirs.current_player())  # the winner leads the next trick
    if ours.phase != Phase.GAME_OVER:
        return [f"{where}: OpenSpiel's hand ended, ours goes on"]
    return _compare_results(ours, theirs, os_winners, where)


def _compare_results(ours: State, theirs: Any, os_winners: list[int], where: str) -> list[str]:
    result = ours.results[0]
    text = str(theirs)
    n = len(result.tricks_won)
    problems: list[str] = []
    os_won = _os_row(text, "Tricks Won")
    os_bids = _os_row(text, "Bids")
    earlier = [os_winners.count(seat) for seat in range(n)]
    last = [seat for seat in range(n) if os_won[seat] - earlier[seat] == 1]
    os_winners = os_winners + last
    our_winners = [trick.winner for trick in result.tricks]
    if our_winners != os_winners:
        problems.append(f"{where}: trick winners differ, OpenSpiel {os_winners}, ours {our_winners}")
    if list(result.tricks_won) != os_won:
        problems.append(f"{where}: tricks won differ, OpenSpiel {os_won}, ours {list(result.tricks_won)}")
    if list(result.bids) != os_bids:
        problems.append(f"{where}: bids differ, OpenSpiel {os_bids}, ours {list(result.bids)}")
    os_exact = [ret - won == EXACT_BONUS for ret, won in zip(theirs.returns(), os_won, strict=True)]
    our_exact = [bid == won for bid, won in zip(result.bids, result.tricks_won, strict=True)]
    if os_exact != our_exact:
        problems.append(f"{where}: exact bids differ, OpenSpiel {os_exact}, ours {our_exact}")
    return problems


@dataclass
class Report:
    hands: int = 0
    disagreements: int = 0
    examples: list[str] = field(default_factory=list)
    cases: set[tuple[int, int]] = field(default_factory=set)  # (players, hand size) covered


def run(
    hands: int,
    seed: int = 0,
    players: range = range(MIN_PLAYERS, MAX_PLAYERS + 1),
    keep_examples: int = 10,
) -> Report:
    """Play ``hands`` hands, cycling over every (players, hand size) OpenSpiel allows."""
    pyspiel = load_pyspiel()
    rng = random.Random(seed)
    tables = [OpenSpielTable(pyspiel, n) for n in players]
    cases = [(table, size) for table in tables for size in range(1, table.max_tricks + 1)]
    report = Report()
    for index in range(hands):
        table, size = cases[index % len(cases)]
        problems = play_hand(table, size, rng.randrange(table.num_players), rng)
        report.hands += 1
        report.cases.add((table.num_players, size))
        if problems:
            report.disagreements += 1
            report.examples.extend(problems[: max(0, keep_examples - len(report.examples))])
    return report
