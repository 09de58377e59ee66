"""Tournaments on the real stack under Redis faults: a restart while tables are in play."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack
from arena.redis_client import retrying_client
from arena.tournament.standings import duplicate_observations, standings
from arena.tournament.store import TournamentStore

from ..ladder.helpers import wait_until
from .test_stack import cli, standings_from_records

pytestmark = pytest.mark.slow  # a whole stack and a Redis restart


def test_a_redis_restart_mid_tournament_loses_no_game_and_counts_none_twice(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis
) -> None:
    stack = make_stack(engine=False, remote_worker=False)
    bots = ("heuristic", "random") * 3
    entrants = [f"--entrant=builtin:{bot}={bot}-{n}" for n, bot in enumerate(bots)]
    cli(stack, "create", "rs", *entrants, "--deals", "2", "--option", "hand_sizes=[3,2,1]")
    store = TournamentStore(retrying_client(redis_server.url, retries=25))
    wait_until(lambda: store.progress("rs").tables_done >= 3, 60, "some tables to finish", poll=0.05)
    assert store.progress("rs").state == "running"
    redis_server.restart()  # SIGTERM: the AOF is written out; then the same data directory again
    wait_until(lambda: store.progress("rs").state == "finished", 120, "the tournament to finish", poll=0.2)
    progress = store.progress("rs")
    assert (progress.tables, progress.tables_done, progress.games_done) == (20, 20, 120)
    assert Counter(store.logged_tables("rs")) == Counter({table: 1 for table in store.tables("rs")})
    records = store.records("rs")
    assert len(records) == 120 and all(record["complete"] for record in records.values())
    assert standings_from_records(records) == standings(duplicate_observations(store.game_results("rs")), 500)
