"""Bidding, play, trumps, ties and the typed errors of the state machine."""

from __future__ import annotations

import random

import pytest

from ohell.cards import NO_CARD, parse_card
from ohell.errors import ChanceError, IllegalActionError, RulesError
from ohell.observation import observe
from ohell.presets import preset
from ohell.rules import Rules
from ohell.state import BID_BASE, Game, HandResult, Phase, State


def cards(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def one_hand(preset_name: str, size: int, players: int = 4, **options: object) -> State:
    """A state at the bidding of a one-hand game; seat ``players - 1`` deals."""
    rules = Rules.from_dict({"hand_sizes": [size], **options}, base=preset(preset_name))
    state = Game(rules, players).new_state()
    state.cut(cards("2D 3D 4D 5D 6D 7D")[: players - 1] + [parse_card("AD")])
    return state


def play_defaults(state: State, rng: random.Random) -> list[HandResult]:
    """Play to the end with random chance and every seat taking its default action."""
    while not state.is_terminal():
        if state.is_chance():
            state.chance_random(rng)
        else:
            state.apply_action(state.default_action())
    return state.results


def test_revoke_is_refused_naming_the_suit_to_follow() -> None:
    state = one_hand("classic", 2)
    state.deal_hands([cards("AS 2H"), cards("KS 3H"), cards("QS 4H"), cards("JS 5H")], parse_card("2C"))
    for seat in range(4):
        state.bid(seat, 0 if seat != 3 else 1)
    state.play(0, parse_card("AS"))
    with pytest.raises(IllegalActionError) as error:
        state.play(1, parse_card("3H"))
    assert error.value.seat == 1
    assert "must follow spades" in str(error.value) and "KS" in str(error.value)
    state.play(1, parse_card("KS"))  # the state is unchanged by the refused play


def test_out_of_turn_unheld_and_out_of_range_actions_are_refused() -> None:
    state = one_hand("classic", 2)
    state.deal_hands([cards("AS 2H"), cards("KS 3H"), cards("QS 4H"), cards("JS 5H")], parse_card("2C"))
    with pytest.raises(IllegalActionError, match="seat 0's turn to bid"):
        state.bid(2, 1)
    with pytest.raises(IllegalActionError, match="bids run from 0 to 2"):
        state.bid(0, 3)
    with pytest.raises(IllegalActionError, match="bidding phase"):
        state.act(0, parse_card("AS"))
    for seat in range(4):
        state.bid(seat, 1 if seat == 0 else 0)
    with pytest.raises(IllegalActionError, match="does not hold KS"):
        state.play(0, parse_card("KS"))
    with pytest.raises(IllegalActionError, match="not an action number"):
        state.apply_action("AS")  # type: ignore[arg-type]


def test_trump_wins_and_trumping_is_optional_when_void() -> None:
    state = one_hand("classic", 2)
    state.deal_hands(
        [cards("AS KD"), cards("2H 9C"), cards("3S 4S"), cards("4D 5D")], parse_card("3H")
    )  # hearts are trumps; seat 1 is void in spades and holds a trump and a club
    for seat in range(3):
        state.bid(seat, 0)
    state.bid(3, 1)
    state.play(0, parse_card("AS"))
    assert sorted(state.legal_actions()) == sorted(cards("2H 9C"))  # trumping is optional
    discard = state.clone()
    discard.play(1, parse_card("9C"))
    state.play(1, parse_card("2H"))
    for copy in (state, discard):
        copy.play(2, parse_card("3S"))
        copy.play(3, parse_card("4D"))
    assert state.tricks[0].winner == 1  # the lowest trump beats the ace led
    assert discard.tricks[0].winner == 0


def test_no_trump_when_no_card_is_left_and_in_designated_hands() -> None:
    rng = random.Random(3)
    full = one_hand("river", 13)
    full.chance_random(rng)
    assert full.trump_card == NO_CARD and full.trump_suit == -1
    with pytest.raises(ChanceError, match="no card is left"):
        other = one_hand("river", 13)
        hands = [list(range(13 * s, 13 * s + 13)) for s in range(4)]
        other.deal_hands(hands, 0)
    rules = Rules.from_dict({"hand_sizes": [2, 2, 2], "no_trump_every": 3}, base=preset("river"))
    trumps = [hand.trump_card for hand in play_defaults(Game(rules, 4).new_state(), rng)]
    assert trumps[0] != NO_CARD and trumps[1] != NO_CARD and trumps[2] == NO_CARD


def test_cut_ties_are_recut_among_the_tied() -> None:
    state = Game(preset("classic"), 4).new_state()
    state.cut(cards("AS 2C AD 3C"))
    assert state.phase == Phase.CUT and state.cutters == (0, 2)
    state.cut(cards("4H 9H"))
    assert state.dealer == 2 and state.phase == Phase.DEAL
    assert state.order == (3, 0, 1, 2)  # bidding and dealing start at the dealer's left


def test_deal_rotates_left_each_hand() -> None:
    state = Game(Rules(hand_sizes=(1, 1, 1, 1, 1)), 3).new_state()
    dealers = [hand.dealer for hand in play_defaults(state, random.Random(5))]
    first = dealers[0]
    assert dealers == [(first + k) % 3 for k in range(5)]


def test_bid_may_change_until_the_next_player_bids() -> None:
    state = one_hand("classic", 3)
    state.chance_random(random.Random(1))
    state.bid(0, 1)
    state.change_bid(0, 2)
    state.bid(1, 0)
    with pytest.raises(IllegalActionError, match="only the latest bidder"):
        state.change_bid(0, 1)
    state.bid(2, 0)
    with pytest.raises(IllegalActionError, match="may not bid 1"):
        state.bid(3, 1)
    state.bid(3, 0)
    with pytest.raises(IllegalActionError, match="may not bid 1"):
        state.change_bid(3, 1)  # the dealer may change before the lead, but not into the hook
    with pytest.raises(IllegalActionError, match="a bid is a whole number"):
        state.change_bid(3, 0.5)  # type: ignore[arg-type]
    state.change_bid(3, 2)
    assert state.bids == [2, 0, 0, 2]
    state.apply_action(state.legal_actions()[0])
    with pytest.raises(IllegalActionError):
        state.change_bid(3, 0)  # the first card has been led
    assert [e[0] for e in state.events] == ["bid", "change", "bid", "bid", "bid", "change", "play"]


def test_bid_changes_are_off_outside_the_classic_profile() -> None:
    state = one_hand("river", 3)
    state.chance_random(random.Random(1))
    state.bid(0, 1)
    with pytest.raises(IllegalActionError, match="bid changes are off"):
        state.change_bid(0, 2)


def test_blind_bidding_hides_own_cards_and_other_bids_and_the_dealer_rebids_on_the_hook() -> None:
    state = one_hand("river-blind", 3)
    state.chance_random(random.Random(2))
    seen = observe(state, 0)
    assert seen.hand == () and seen.trump_card == state.trump_card != NO_CARD  # the turned card is public
    state.bid(0, 1)
    state.bid(1, 1)
    later = observe(state, 2)
    assert later.bids == (-1, -1, -1, -1) and later.hand == ()
    state.bid(2, 0)
    assert state.forbidden_bid() is None  # blind: the dealer cannot know the total yet
    state.bid(3, 1)  # 1 + 1 + 0 + 1 = 3 tricks: revealed bids hit the hook
    assert state.phase == Phase.BID and state.rebid and state.current == 3
    assert observe(state, 3).bids == (1, 1, 0, 1)
    with pytest.raises(IllegalActionError, match="may not bid 1"):
        state.bid(3, 1)
    state.bid(3, 2)
    assert state.phase == Phase.PLAY and observe(state, 0).hand != ()
    assert [e[0] for e in state.events] == ["bid", "bid", "bid", "bid", "rebid"]


def test_hook_off_allows_the_dealer_any_bid() -> None:
    state = one_hand("online-no-hook", 2)
    state.chance_random(random.Random(4))
    for seat in range(3):
        state.bid(seat, 0)
    assert state.forbidden_bid() is None and state.legal_bids() == [0, 1, 2]


def test_sudden_death_breaks_a_tie_among_the_tied_players_only() -> None:
    rules = Rules.from_dict({"hand_sizes": [1]}, base=preset("river-sudden-death"))
    state = Game(rules, 3).new_state()
    state.cut(cards("2C 3C AC"))  # seat 2 deals; order 0, 1, 2
    state.deal_hands([cards("AS"), cards("KS"), cards("2D")], parse_card("3H"))
    state.bid(0, 0)
    state.bid(1, 0)
    state.bid(2, 0)
    for seat, card in ((0, "AS"), (1, "KS"), (2, "2D")):
        state.play(seat, parse_card(card))
    assert state.scores == [0, 10, 10]
    assert state.sudden_death and state.phase == Phase.DEAL and set(state.order) == {1, 2}
    assert state.dealer == 1 and state.order == (2, 1)  # the deal passes on among the tied
    state.deal_hands([[], cards("AH"), cards("KH")], None)  # one card, no trump
    state.bid(2, 0)
    with pytest.raises(IllegalActionError, match="may not bid 1"):
        state.bid(1, 1)  # the hook applies in sudden death too
    state.bid(1, 0)
    state.play(2, parse_card("KH"))
    state.play(1, parse_card("AH"))
    assert state.winners == (2,) and state.scores == [0, 10, 10]  # sudden death adds no points


def test_ties_share_the_win_by_default() -> None:
    rules = Rules(hand_sizes=(1,))
    state = Game(rules, 3).new_state()
    state.cut(cards("2C 3C AC"))
    state.deal_hands([cards("AS"), cards("KS"), cards("2D")], parse_card("3H"))
    for seat in range(3):
        state.bid(seat, 0)
    for seat, card in ((0, "AS"), (1, "KS"), (2, "2D")):
        state.play(seat, parse_card(card))
    assert state.winners == (1, 2)


def test_clone_is_independent() -> None:
    state = one_hand("classic", 5)
    state.chance_random(random.Random(8))
    copy = state.clone()
    copy.apply_action(copy.legal_actions()[0])
    assert state.bids == [-1, -1, -1, -1] and copy.bids[0] >= 0
    assert state.events == [] and len(copy.events) == 1


def test_default_action_is_bid_zero_or_the_lowest_legal_bid_then_the_lowest_card() -> None:
    state = one_hand("classic", 1)
    state.deal_hands([cards("AS"), cards("KS"), cards("2D"), cards("3D")], parse_card("3H"))
    for _ in range(3):
        assert state.default_action() == BID_BASE
        state.apply_action(state.default_action())
    assert state.forbidden_bid() == 1 and state.default_action() == BID_BASE
    state.apply_action(state.default_action())
    assert state.default_action() == parse_card("AS")


@pytest.mark.parametrize(
    ("deck", "message"),
    [([0, 0, 1, 2, 3], "more than once"), ([0, 1], "needs 5 cards"), ([0, 1, 2, 3, 99], "not a card index")],
)
def test_bad_deals_are_refused(deck: list[int], message: str) -> None:
    state = one_hand("classic", 1)
    with pytest.raises(ChanceError, match=message):
        state.deal(deck)


def test_a_bid_that_is_not_a_whole_number_is_named() -> None:
    state = one_hand("classic", 2)
    state.chance_random(random.Random(1))
    with pytest.raises(IllegalActionError, match=r"cannot bid -1: a bid is a whole number"):
        state.bid(0, -1)
    with pytest.raises(IllegalActionError, match=r"cannot bid 2.5"):
        state.bid(0, 2.5)  # type: ignore[arg-type]


def test_unknown_and_bad_options_name_the_option() -> None:
    with pytest.raises(RulesError, match="unknown rule option"):
        Rules.from_dict({"trumps": "none"})
    with pytest.raises(RulesError, match="scoring='golf'"):
        Rules.from_dict({"scoring": "golf"})
    with pytest.raises(RulesError, match="hook=1"):
        Rules.from_dict({"hook": 1})


def test_change_options_are_exactly_the_changes_change_bid_accepts() -> None:
    """000: State.change_options(seat) lists every bid change_bid would take now, and no other."""
    import random

    from ohell.errors import IllegalActionError
    from ohell.presets import preset
    from ohell.state import Game, Phase

    game = Game(preset("classic"), 4)
    offered = 0
    for seed in range(6):
        rng, state = random.Random(seed), game.new_state()
        while state.phase != Phase.GAME_OVER:
            if state.phase <= Phase.DEAL:
                state.chance_random(rng)
                continue
            for seat in range(4):
                accepted = []
                for tricks in range(state.hand_size + 1):
                    try:
                        state.clone().change_bid(seat, tricks)
                        accepted.append(tricks)
                    except IllegalActionError:
                        pass
                assert state.change_options(seat) == accepted
                offered += bool(accepted)
            state.apply_action(rng.choice(list(state.legal_actions())))
    assert offered > 100


def test_an_option_nested_past_the_json_readers_depth_is_refused_naming_it() -> None:
    """A value of thousands of brackets (a host form's options field holds 20,000 characters) made
    json.loads raise RecursionError: the web app answered 500 and the command line a traceback."""
    from ohell.presets import preset_with_options

    deep = "[" * 9000 + "]" * 9000
    with pytest.raises(RulesError, match=r"hand_sizes='\[\[\["):
        preset_with_options("classic", [f"hand_sizes={deep}"])
