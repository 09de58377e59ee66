"""Pure parts of tournaments: schedules, duplicate deals and rotations, standings and their bootstrap."""

from __future__ import annotations

import csv
import io
import json
import math
import random
import statistics
from typing import Any

import pytest

from arena.play.specs import SeatSpec
from arena.tournament.deals import (
    DealSet,
    ScriptedChance,
    decks_per_set,
    draw_deal_set,
    rotation,
    seating,
    secure_decks,
)
from arena.tournament.model import MAX_DEAL_SETS, MAX_DEALS_PER_TABLE, MAX_DECKS, Tournament, TournamentError
from arena.tournament.play import hand_seeds, play_builtin_game, play_table_games
from arena.tournament.schedule import (
    ScheduleError,
    balanced_design,
    pair_counts,
    round_robin,
    swiss_round,
    table_sizes,
)
from arena.tournament.standings import (
    GameResult,
    Observation,
    bootstrap_means,
    duplicate_observations,
    mean_ci_width,
    plain_observations,
    standings,
    t_quantile,
    to_csv,
    to_json,
)
from ohell.cards import cards_of
from ohell.errors import ChanceError
from ohell.presets import PRESETS, preset_with_options
from ohell.rules import TieBreak
from ohell.state import Game

RULES = preset_with_options("classic", ["hand_sizes=[3,2,1]"])


def test_round_robin_takes_every_combination_when_few() -> None:
    tables = round_robin(6, 3)
    assert len(tables) == math.comb(6, 3) == len(set(tables))
    assert set(pair_counts(6, tables).values()) == {4}


@pytest.mark.parametrize(("entrants", "seats"), [(12, 4), (13, 4), (16, 4), (9, 3), (10, 4)])
def test_balanced_design_meets_every_pair_evenly(entrants: int, seats: int) -> None:
    tables = balanced_design(entrants, seats)
    assert all(len(set(table)) == seats for table in tables)
    appearances = {sum(e in table for table in tables) for e in range(entrants)}
    assert len(appearances) == 1
    counts = pair_counts(entrants, tables).values()
    assert min(counts) >= 1 and max(counts) - min(counts) <= 1
    assert balanced_design(entrants, seats) == tables  # deterministic


def test_large_round_robin_uses_the_design_and_bad_fields_are_refused() -> None:
    assert len(round_robin(12, 4)) == 12 < math.comb(12, 4)
    with pytest.raises(ScheduleError, match="seats: 8"):
        round_robin(10, 8)
    with pytest.raises(ScheduleError, match="2 entrants"):
        round_robin(2, 3)


def test_swiss_round_groups_neighbours_in_standing() -> None:
    standing = [7, 3, 9, 0, 1, 2, 4, 5, 6, 8]
    assert table_sizes(10, 4) == [4, 3, 3]
    assert swiss_round(standing, 4) == [(7, 3, 9, 0), (1, 2, 4), (5, 6, 8)]
    with pytest.raises(ScheduleError, match="4 entrants cannot be split into tables of 3 seats$"):
        table_sizes(4, 3)  # 2 tables of 2: below the minimum (it said "tables of 3 to 3 seats")


def test_deal_set_fixes_each_seats_cards_whoever_sits_there() -> None:
    game = Game(RULES, 3)
    deal_set = draw_deal_set(game, random.Random(5))
    assert DealSet.from_json(deal_set.to_json()) == deal_set
    entrants = [SeatSpec.builtin("random", "a"), SeatSpec.builtin("heuristic", "b"), SeatSpec.builtin("random", "c")]
    seeds = hand_seeds("t0/d0", deal_set, 3)
    records = [play_builtin_game(f"g{k}", RULES, rotation(entrants, k), deal_set, seeds) for k in range(3)]
    # the first hand is dealt before anyone acts: the same cards for each seat in every rotation
    assert len({json.dumps(record["hands"][0]["deal"]) for record in records}) == 1
    assert len({json.dumps(record["cuts"]) for record in records}) == 1
    # every entrant sits in every seat once
    seats = [[seat["name"] for seat in record["seats"]] for record in records]
    for name in "abc":
        assert sorted(row.index(name) for row in seats) == [0, 1, 2]


def test_secure_decks_are_shuffled_decks() -> None:
    """The deal sets a tournament draws (sorted by random keys since drawing took most of the
    creation time): each deck holds every card once, and no two decks are alike."""
    deal_set = draw_deal_set(Game(RULES, 3))
    assert all(sorted(deck) == list(range(52)) for deck in deal_set.decks)
    assert len(set(deal_set.decks)) == len(deal_set.decks) == len(draw_deal_set(Game(RULES, 3)).decks)
    firsts = [deck[0] for deck in secure_decks(2000)]
    assert len(set(firsts)) == 52 and max(firsts.count(card) for card in range(52)) < 90  # about 38 each


def test_scripted_chance_deals_exactly_the_given_deck() -> None:
    game = Game(RULES, 3)
    deal_set = draw_deal_set(game, random.Random(9))
    state = game.new_state()
    chance = ScriptedChance(deal_set)
    while state.is_chance():
        chance(state)
    dealt = sorted(card for mask in state.hands for card in cards_of(mask))
    assert dealt == sorted(deal_set.decks[0][:9])
    with pytest.raises(ChanceError):
        chance(state)


def test_rotation_shifts_the_entrants() -> None:
    assert rotation("abcd", 0) == list("abcd")
    assert rotation("abcd", 1) == list("dabc")


def test_duplicate_points_compare_each_seat_on_the_same_deal() -> None:
    games = [
        GameResult("d0", ("a", "b", "c"), (30, 10, 2)),
        GameResult("d0", ("c", "a", "b"), (24, 16, 8)),
        GameResult("d0", ("b", "c", "a"), (27, 4, 14)),
    ]
    points = {}
    for obs in duplicate_observations(games):
        points[obs.entrant] = points.get(obs.entrant, 0) + obs.points
    # seat means 27, 10, 8: a = 3 + 6 + 6, b = 0 + 0 + 0, c = -6 - 3 - 6
    assert points == pytest.approx({"a": 15.0, "b": 0.0, "c": -15.0})
    assert sum(points.values()) == pytest.approx(0.0)
    plain = plain_observations(games[:1])
    assert [round(obs.points, 3) for obs in plain] == [16.0, -4.0, -12.0]


def test_a_deal_counts_once_every_rotation_is_played() -> None:
    """While a tournament runs, a deal played in one rotation so far gave everyone 0 points for that
    game (each seat compared with itself) and counted it and the deal: the provisional means shrank
    towards 0 and the interval had a deal it had not measured."""
    games = []
    for deal in range(3):
        for turn in range(3):
            seats = tuple(rotation(("a", "b", "c"), turn))
            games.append(GameResult(f"t/d{deal}", seats, tuple({"a": 30, "b": 20, "c": 10}[e] + deal for e in seats)))
    played = games[:7]  # deal d2 in its first rotation only
    assert {obs.unit for obs in duplicate_observations(played)} == {"t/d0", "t/d1"}
    rows = {row.entrant: row for row in standings(duplicate_observations(played), replicates=50)}
    assert (rows["a"].games, rows["a"].deals, rows["a"].mean_duplicate) == (6, 2, 10.0)
    assert {row.entrant: row.mean_duplicate for row in standings(duplicate_observations(games), 50)} == {
        "a": 10.0,
        "b": 0.0,
        "c": -10.0,
    }


def test_standings_rank_with_intervals_and_tie_breaks() -> None:
    rng = random.Random(3)
    games = []
    for deal in range(40):
        for turn in range(3):
            seats = tuple(rotation(("strong", "mid", "weak"), turn))
            skill = {"strong": 6, "mid": 0, "weak": -6}
            games.append(GameResult(f"d{deal}", seats, tuple(20 + skill[e] + rng.randint(-4, 4) for e in seats)))
    table = standings(duplicate_observations(games), replicates=500, seed=1)
    assert [row.entrant for row in table] == ["strong", "mid", "weak"]
    assert all(row.ci_low < row.mean_duplicate < row.ci_high for row in table)
    assert table[0].ci_low > table[1].ci_high and table[0].p_above_next == 1.0
    assert table[-1].p_above_next is None and table[0].games == 120 and table[0].deals == 40
    assert standings(duplicate_observations(games), replicates=500, seed=1) == table  # seeded
    # a tie on mean duplicate points goes to deals won, then fewer forfeits, then the name
    tied = [GameResult("d0", ("y", "x", "z"), (5, 5, 5)), GameResult("d0", ("x", "z", "y"), (5, 5, 5))]
    tied += [GameResult("d0", ("z", "y", "x"), (5, 5, 5))]
    assert [row.entrant for row in standings(duplicate_observations(tied), replicates=10)] == ["x", "y", "z"]


def test_an_entrant_needs_two_deals_for_an_interval() -> None:
    """With one deal every resample is that deal: a zero-width interval and P(above next) = 1.0."""
    one = [
        GameResult("t/d0", ("a", "b", "c"), (10, 5, 0)),
        GameResult("t/d0", ("c", "a", "b"), (4, 12, 1)),
        GameResult("t/d0", ("b", "c", "a"), (3, 2, 9)),
    ]
    table = standings(duplicate_observations(one), replicates=200)
    assert [row.entrant for row in table] == ["a", "b", "c"] and table[0].mean_duplicate > 0
    assert [(row.ci_low, row.ci_high, row.p_above_next) for row in table] == [(None, None, None)] * 3
    assert mean_ci_width(table) == 0.0
    # "d" joins for one deal of another table: the others have two deals, "d" still one
    two = [*one, *(GameResult("t/d1", seats, scores) for seats, scores in ((("a", "b", "c"), (8, 2, 1)),
           (("c", "a", "b"), (1, 9, 3)), (("b", "c", "a"), (2, 2, 7))))]  # fmt: skip
    two += [GameResult("u/d0", ("a", "d", "c"), (5, 6, 7)), GameResult("u/d0", ("c", "a", "d"), (5, 6, 7))]
    two += [GameResult("u/d0", ("d", "c", "a"), (5, 6, 7))]
    ranked = standings(duplicate_observations(two), replicates=200)
    assert [(row.entrant, row.deals) for row in ranked if row.ci_low is None or row.ci_high is None] == [("d", 1)]
    assert all(row.ci_low < row.ci_high for row in ranked if row.ci_low is not None and row.ci_high is not None)
    beside_d = [
        (upper.p_above_next, upper.entrant)
        for upper, lower in zip(ranked, ranked[1:], strict=False)
        if "d" in (upper.entrant, lower.entrant)
    ]
    others = [
        upper.p_above_next
        for upper, lower in zip(ranked, ranked[1:], strict=False)
        if "d" not in (upper.entrant, lower.entrant)
    ]
    assert beside_d and all(p is None for p, _ in beside_d) and others and all(p is not None for p in others)


@pytest.mark.slow
def test_the_interval_of_few_deals_is_as_wide_as_students_t() -> None:
    """The percentile bootstrap's 2.5 % and 97.5 % resampled means are too narrow with few deals: of
    its intervals for an entrant whose true mean is 0, 47 % held 0 at 2 deals, 76 % at 3, 85 % at 5."""
    points = (-2.0, -1.0, 0.0, 1.0, 2.0)  # a's duplicate points on each of 5 deals, b's the opposite
    observations = [Observation(f"d{k}", "a", x, 0) for k, x in enumerate(points)]
    observations += [Observation(f"d{k}", "b", -x, 0) for k, x in enumerate(points)]
    row = next(row for row in standings(observations, replicates=2000) if row.entrant == "a")
    assert row.ci_low is not None and row.ci_high is not None
    plain = statistics.quantiles(bootstrap_means(observations, 2000)["a"], n=40, method="inclusive")
    student = 2 * t_quantile(0.975, 4) * statistics.stdev(points) / math.sqrt(len(points))  # 3.93
    assert plain[-1] - plain[0] < 2.5 and row.ci_high - row.ci_low == pytest.approx(student, rel=0.05)
    assert row.ci_low == pytest.approx(-row.ci_high)  # around the mean, 0
    assert t_quantile(0.975, 1) == pytest.approx(12.706, abs=1e-3) and t_quantile(0.975, 29) == pytest.approx(
        2.045, abs=1e-3
    )
    rng = random.Random(5)
    for deals, least in ((3, 0.88), (5, 0.9)):  # the percentiles: at most 0.75 and 0.9375 (the deals' range)
        held = 0
        for rep in range(200):  # deals' means from a normal law with mean 0
            sample = [Observation(f"d{k}", "a", rng.gauss(0, 1), 0) for k in range(deals)]
            sample += [Observation(f"d{k}", "b", 0.0, 0) for k in range(deals)]
            row = next(row for row in standings(sample, replicates=500, seed=rep) if row.entrant == "a")
            held += row.ci_low <= 0 <= row.ci_high  # type: ignore[operator]
        assert held >= least * 200, (deals, held)


def test_exports_hold_the_same_standings() -> None:
    games = [GameResult("d0", ("a", "b", "c"), (9, 5, 1)), GameResult("d1", ("b", "c", "a"), (3, 9, 6))]
    table = standings(plain_observations(games), replicates=50)
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert [row["entrant"] for row in rows] == [row.entrant for row in table]
    assert float(rows[0]["mean_duplicate"]) == table[0].mean_duplicate
    assert rows[-1]["p_above_next"] == ""
    assert json.loads(to_json(table))[0]["entrant"] == table[0].entrant


def test_a_table_plays_every_rotation_of_every_deal_and_skips_finished_games() -> None:
    game = Game(RULES, 3)
    deal_sets = [draw_deal_set(game, random.Random(seed)) for seed in (1, 2)]
    entrants = [SeatSpec.builtin(bot, name) for bot, name in (("random", "a"), ("heuristic", "b"), ("random", "c"))]
    played: dict[str, dict[str, object]] = {}
    play_table_games("t0", RULES, entrants, deal_sets, done=lambda g: g == "t0/d0/r1", record=played.__setitem__)
    assert sorted(played) == ["t0/d0/r0", "t0/d0/r2", "t0/d1/r0", "t0/d1/r1", "t0/d1/r2"]
    assert all(record["complete"] for record in played.values())


def test_seating_puts_everyone_in_every_seat_and_alternates_the_direction() -> None:
    entrants = ["a", "b", "c", "d"]
    for deal in (0, 1):
        seatings = [seating(entrants, deal, turn) for turn in range(4)]
        for name in entrants:
            assert sorted(row.index(name) for row in seatings) == [0, 1, 2, 3]
    left_of_a = {seating(entrants, deal, 0)[(seating(entrants, deal, 0).index("a") + 1) % 4] for deal in (0, 1)}
    assert left_of_a == {"b", "d"}  # a's next seat holds b in even deal sets, d in odd ones


def test_the_bots_own_chance_is_duplicated_too() -> None:
    """Common random numbers: the bot holding a seat of a deal set gets the same seed in every
    rotation, so three entrants of one random bot replay the same game: no duplicate point at all."""
    game = Game(RULES, 3)
    deal_sets = [draw_deal_set(game, random.Random(seed)) for seed in (4, 5)]
    entrants = [SeatSpec.builtin("random", name) for name in "abc"]
    played: dict[str, dict[str, Any]] = {}
    play_table_games("t1", RULES, entrants, deal_sets, record=played.__setitem__)
    results = [
        GameResult(name.rpartition("/")[0], tuple(s["name"] for s in rec["seats"]), tuple(rec["totals"]))
        for name, rec in played.items()
    ]
    assert len(results) == 6 and all(obs.points == 0 for obs in duplicate_observations(results))
    seeds = hand_seeds("t1/d0", deal_sets[0], 3)
    assert len(set(seeds)) == 3 and seeds == hand_seeds("t1/d0", deal_sets[0], 3)
    assert hand_seeds("t1/d1", deal_sets[0], 3) != seeds and hand_seeds("t1/d0", deal_sets[1], 3) != seeds


def test_the_match_host_seeds_built_in_seats_as_a_local_table_does() -> None:
    """A table with remote entrants goes through the match host: given the same per-seat seeds and
    deal set, its built-in seats play exactly as on a table of built-in bots only."""
    from arena.play.host import host_match_sync

    deal_set = draw_deal_set(Game(RULES, 3), random.Random(2))
    seats = [SeatSpec.builtin("random", name) for name in "abc"]
    seeds = hand_seeds("t0/d0", deal_set, 3)
    hosted = host_match_sync("m", RULES, seats, 0, chance=ScriptedChance(deal_set), spectate=False, bot_seeds=seeds)
    assert hosted["hands"] == play_builtin_game("m", RULES, seats, deal_set, seeds)["hands"]
    with pytest.raises(ValueError, match="bot_seeds"):
        host_match_sync("m", RULES, seats, 0, chance=ScriptedChance(deal_set), spectate=False, bot_seeds=seeds[:2])


def test_identical_bots_come_out_exactly_opposite_in_the_two_directions() -> None:
    """Why two identical bots can differ in a finished tournament: only by chance over deal sets.
    On one deal set the seatings of an odd deal set are those of an even one with the two
    identical entrants swapped, so their duplicate difference is exactly opposite."""
    game = Game(RULES, 3)
    entrants = [
        SeatSpec.builtin("heuristic", "h1"),
        SeatSpec.builtin("heuristic", "h2"),
        SeatSpec.builtin("random", "r"),
    ]
    differences = []
    for seed in range(6):
        deal_set = draw_deal_set(game, random.Random(seed))
        seeds = hand_seeds("t/d0", deal_set, 3)
        both = []
        for direction in (0, 1):
            totals = {"h1": 0, "h2": 0, "r": 0}
            for turn in range(3):
                seats = seating(entrants, direction, turn)
                record = play_builtin_game("g", RULES, seats, deal_set, seeds)
                for seat, total in zip(seats, record["totals"], strict=True):
                    totals[seat.name] += total
            both.append(totals["h1"] - totals["h2"])
        assert both[0] == -both[1]
        differences.append(both[0])
    assert any(differences)  # the seatings do matter on a deal set: the test sees real differences


@pytest.mark.parametrize(
    ("entrants", "seats", "fmt", "rounds", "deals"),
    [(200, 3, "round-robin", 1, 2), (200, 4, "swiss", 20, 50), (100, 3, "round-robin", 1, 6)],
)
def test_a_tournament_draws_a_bounded_number_of_deal_sets(
    entrants: int, seats: int, fmt: str, rounds: int, deals: int
) -> None:
    """Every deal set is drawn and stored in one Redis call at creation (about 3 KB each, a
    millisecond to draw): 200 entrants at 3 seats, 6,800 tables, with 50 deal sets each were 340,000
    of them, a gigabyte in one Lua script call, minutes of drawing and Redis stalled meanwhile."""
    field = tuple(SeatSpec.builtin("random", f"r{n}") for n in range(entrants))
    with pytest.raises(TournamentError, match=f"deals: .* at most {MAX_DEAL_SETS} deal sets"):
        Tournament("big", field, seats=seats, format=fmt, rounds=rounds, deals=deals)
    most = MAX_DEAL_SETS // Tournament("big", field, seats=seats, format=fmt, rounds=rounds).tables()
    Tournament("big", field, seats=seats, format=fmt, rounds=rounds, deals=min(most, MAX_DEALS_PER_TABLE))


@pytest.mark.parametrize(
    ("overrides", "entrants"),
    [
        ({"tie_break": "sudden_death", "sudden_death_limit": 10_000}, 3),  # 10,000 sudden-death decks
        ({"hand_sizes": [1] * 1000}, 9),  # a schedule of 1,000 hands
    ],
)
def test_a_tournament_draws_a_bounded_number_of_decks(overrides: dict[str, Any], entrants: int) -> None:
    """A deal set holds a deck per hand and per sudden-death hand the rules allow: 50 deal sets of one
    table with sudden_death_limit=10000 were 110 MB in one Redis call and 7 s of drawing (at the
    10,000 deal sets allowed, 22 GB). The bound counts decks, not deal sets."""
    field = tuple(SeatSpec.builtin("random", f"r{n}") for n in range(entrants))
    one = Tournament("t", field, preset="river", overrides=overrides)
    tables, decks = one.tables(), decks_per_set(Game(one.rules(), 3))
    assert decks * tables * MAX_DEALS_PER_TABLE > MAX_DECKS
    with pytest.raises(TournamentError, match=f"{decks * tables * MAX_DEALS_PER_TABLE} decks .* at most {MAX_DECKS}"):
        Tournament("big", field, deals=MAX_DEALS_PER_TABLE, preset="river", overrides=overrides)
    Tournament("fits", field, deals=MAX_DECKS // (decks * tables), preset="river", overrides=overrides)
    ordinary = [rules for rules in PRESETS.values() if rules.tie_break is not TieBreak.SUDDEN_DEATH]
    most = max(decks_per_set(Game(rules, seats)) for rules in ordinary for seats in range(3, 8))
    assert most * MAX_DEAL_SETS <= MAX_DECKS  # every preset without sudden death still has all its deal sets


@pytest.mark.parametrize(
    ("entrants", "seats", "fmt", "rounds"), [(6, 3, "round-robin", 1), (13, 4, "round-robin", 1), (10, 4, "swiss", 3)]
)
def test_the_tables_counted_are_the_tables_made(entrants: int, seats: int, fmt: str, rounds: int) -> None:
    tourney = Tournament("t", tuple(SeatSpec.builtin("random", f"r{n}") for n in range(entrants)), seats, fmt, rounds)
    assert tourney.tables() == len(tourney.first_round()) + len(tourney.round_sizes()) * (rounds - 1)


def test_a_mean_that_rounds_to_zero_is_no_negative_zero_in_the_exports() -> None:
    """Duplicate points of a deal sum to zero, but in floating point to -1e-17 or so: an entrant with
    no edge stood at -0.0 in the standings, and so in the CSV and JSON exports."""
    third = 1 / 3
    observations = [
        Observation(f"t/d{deal}", entrant, points, 10)
        for deal in range(3)
        for entrant, points in (("a", third + third - 2 * third - 1e-12), ("b", 1.0), ("c", -1.0))
    ]
    (row,) = [row for row in standings(observations, replicates=20) if row.entrant == "a"]
    assert math.copysign(1.0, row.mean_duplicate) == 1.0 and math.copysign(1.0, row.total_duplicate) == 1.0
    assert "-0.0" not in to_csv(standings(observations, replicates=20))
    assert "-0.0" not in to_json(standings(observations, replicates=20))


def test_p_above_next_agrees_with_the_intervals_on_few_deals() -> None:
    """P(above next) was the share of resamples in which the entrant's mean beat the next one's: 1.0
    whenever it had beaten the next on every deal, which two equals do on 2 deals one time in four
    (seen: P = 1.000 beside an interval of -69..+69). Now Student's t at the gap over its standard
    error, as the intervals are."""
    two = [Observation(f"d{k}", "a", x, 0) for k, x in enumerate((1.0, 3.0))]
    two += [Observation(f"d{k}", "b", -x, 0) for k, x in enumerate((1.0, 3.0))]
    top = standings(two, replicates=2000)[0]
    assert top.entrant == "a" and top.p_above_next is not None and 0.75 < top.p_above_next < 0.95
    rng = random.Random(11)
    sure = 0
    for rep in range(300):  # two equal entrants on 3 deals: each deal's gap from a normal law around 0
        gaps = [rng.gauss(0, 1) for _ in range(3)]
        sample = [Observation(f"d{k}", "a", g / 2, 0) for k, g in enumerate(gaps)]
        sample += [Observation(f"d{k}", "b", -g / 2, 0) for k, g in enumerate(gaps)]
        p_next = standings(sample, replicates=300, seed=rep)[0].p_above_next
        assert p_next is not None
        sure += p_next >= 0.95
    # the first of two equals is ahead at t's 5 % level either way, so about one time in ten (30 here);
    # the share of resamples gave 0.95 or more 115 times
    assert sure <= 0.15 * 300, sure
