"""Unit tests of the pure table-forming logic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ladder.forming import FormingPolicy, HouseBot, Ticket, form_tables


def tickets(*specs: tuple[float, int, float]) -> list[Ticket]:
    return [Ticket(f"a{i}", mu, games, waited) for i, (mu, games, waited) in enumerate(specs)]


def test_close_ratings_sit_together() -> None:
    queue = tickets(*[(10.0 + i * 0.1, 0, 0.0) for i in range(4)], *[(40.0 + i * 0.1, 0, 0.0) for i in range(4)])
    tables = form_tables(queue, FormingPolicy(seats=4, base_window=1.0, widen_per_s=0.0))
    assert sorted(sorted(t.agents) for t in tables) == [["a0", "a1", "a2", "a3"], ["a4", "a5", "a6", "a7"]]


def test_far_ratings_wait_until_the_window_widens() -> None:
    queue = tickets((10.0, 0, 0.0), (11.0, 0, 0.0), (20.0, 0, 0.0))
    policy = FormingPolicy(seats=3, base_window=2.0, widen_per_s=1.0)
    assert form_tables(queue, policy) == []
    waited = tickets((10.0, 0, 8.0), (11.0, 0, 8.0), (20.0, 0, 8.0))  # window 10 now
    assert [sorted(t.agents) for t in form_tables(waited, policy)] == [["a0", "a1", "a2"]]


def test_window_is_capped() -> None:
    policy = FormingPolicy(seats=3, base_window=1.0, widen_per_s=10.0, max_window=5.0)
    assert policy.window(100.0) == 5.0
    queue = tickets((0.0, 0, 100.0), (1.0, 0, 100.0), (30.0, 0, 100.0))
    assert form_tables(queue, policy) == []


def test_agents_with_few_games_are_preferred() -> None:
    queue = tickets((25.0, 50, 0.0), (25.0, 0, 0.0), (25.0, 1, 0.0), (25.0, 2, 0.0), (25.0, 3, 0.0))
    (table,) = form_tables(queue, FormingPolicy(seats=4))
    assert "a0" not in table.agents  # the veteran waits


def test_house_bots_fill_a_lone_agent_after_the_wait() -> None:
    house = [HouseBot(f"h{i}", 20.0 + i) for i in range(6)]
    policy = FormingPolicy(seats=4, house_fill=True, fill_after_s=5.0)
    assert form_tables(tickets((25.0, 0, 1.0)), policy, house) == []
    (table,) = form_tables(tickets((25.0, 0, 6.0)), policy, house)
    assert table.agents == ("a0",) and table.house == ("h5", "h4", "h3")  # nearest in rating, distinct


def test_no_house_fill_unless_configured() -> None:
    house = [HouseBot(f"h{i}", 25.0) for i in range(3)]
    assert form_tables(tickets((25.0, 0, 60.0)), FormingPolicy(seats=4), house) == []


def test_too_few_house_bots_form_nothing() -> None:
    policy = FormingPolicy(seats=5, house_fill=True, fill_after_s=0.0)
    assert form_tables(tickets((25.0, 0, 1.0)), policy, [HouseBot("h0", 25.0)]) == []


def test_policy_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="seats=8"):
        FormingPolicy(seats=8)
    with pytest.raises(ValueError, match="windows"):
        FormingPolicy(seats=4, base_window=10.0, max_window=5.0)


ticket_lists = st.lists(st.tuples(st.floats(0, 50), st.integers(0, 30), st.floats(0, 20)), min_size=0, max_size=60).map(
    lambda specs: tickets(*specs)
)


@settings(max_examples=150, deadline=None)
@given(ticket_lists, st.integers(3, 7), st.booleans())
def test_tables_are_well_formed(queue: list[Ticket], seats: int, fill: bool) -> None:
    policy = FormingPolicy(seats=seats, base_window=3.0, widen_per_s=0.5, house_fill=fill, fill_after_s=4.0)
    house = [HouseBot(f"h{i}", 10.0 * i) for i in range(seats)]
    tables = form_tables(queue, policy, house)
    seated = [agent for table in tables for agent in table.agents]
    assert len(seated) == len(set(seated))  # nobody at two tables
    by_id = {t.agent_id: t for t in queue}
    for table in tables:
        assert len(table.seated) == seats
        assert len(set(table.house)) == len(table.house)
        anchor = by_id[table.agents[0]]
        if table.house:
            assert fill and anchor.waited_s >= policy.fill_after_s
        for mate in (by_id[a] for a in table.agents[1:]):  # within the wider of the two windows
            assert abs(anchor.mu - mate.mu) <= max(policy.window(anchor.waited_s), policy.window(mate.waited_s))
    assert form_tables(queue, policy, house) == tables  # deterministic


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.integers(3, 7))
def test_equal_ratings_seat_everyone_who_fits(count: int, seats: int) -> None:
    queue = tickets(*[(25.0, i % 3, 0.0) for i in range(count)])
    tables = form_tables(queue, FormingPolicy(seats=seats))
    assert len(tables) == count // seats
