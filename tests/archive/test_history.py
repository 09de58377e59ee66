"""The matchmaker's history functions: Redis (matches not archived yet) and the archive merged, each
match once, in one order, across pages."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from arena.archive import queries
from arena.ladder import archiving
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import NotFound
from services.matchmaker import history

from ..ladder.helpers import builtin_ladder
from .test_archiving import play


def test_pages_merge_hot_and_archived_matches_once(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "h", bots=("random",) * 6, seats=3)
    archived = play(store, "h", 5)
    archiving.archive_pending(store, archive)
    hot = play(store, "h", 4)  # finished and rated, still only in Redis
    seen, token = [], ""
    while True:
        page, token, total = history.list_matches(store, lambda: archive, "h", "", 0, 0, 3, token)
        assert total == 9  # every page counts all of them
        seen += page
        if not token:
            break
    assert [m.match_id for m in seen] == list(reversed(archived + hot))  # newest first, each once
    assert [m.archived for m in seen] == [False] * 4 + [True] * 5
    assert all(len(m.agent_names) == 3 and m.agent_names[0].startswith("h-random-") for m in seen)
    assert all(m.totals and m.state == "finished" and len(m.faults) == 3 for m in seen)
    agent = seen[0].agent_ids[0]
    mine, _, counted = history.list_matches(store, lambda: archive, "", agent, 0, 0, 100, "")
    assert counted == len(mine)
    assert mine and all(agent in m.agent_ids for m in mine)


def test_totals_count_what_the_pages_list(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "c", bots=("random",) * 6, seats=3)
    builtin_ladder(store, "other", bots=("random",) * 3, seats=3)
    play(store, "c", 5)
    play(store, "other", 2)
    archiving.archive_pending(store, archive)
    play(store, "c", 3)  # only in Redis yet

    def listed(ladder: str, agent: str = "", since: int = 0, until: int = 0) -> list[history.MatchView]:
        return history.list_matches(store, lambda: archive, ladder, agent, since, until, 100, "")[0]

    def count(ladder: str, agent: str = "", since: int = 0, until: int = 0) -> int:
        return history.list_matches(store, lambda: archive, ladder, agent, since, until, 1, "")[2]

    every = listed("c")
    assert count("c") == len(every) == 8 and count("other") == 2 and count("") == 10
    agent = every[0].agent_ids[0]
    assert count("c", agent) == len(listed("c", agent)) == sum(agent in m.agent_ids for m in every)
    middle = sorted(m.finished_ms for m in every)[4]
    assert count("c", since=middle) == len(listed("c", since=middle)) == sum(m.finished_ms >= middle for m in every)
    assert count("c", until=middle) == len(listed("c", until=middle)) == sum(m.finished_ms < middle for m in every)
    assert count("c", "a-nobody") == 0
    with pytest.raises(queries.BadCursor):
        history.list_matches(store, lambda: archive, "h", "", 0, 0, 3, "nonsense")


def test_get_match_reads_redis_while_hot_and_the_archive_after(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "g", bots=("random",) * 6, seats=3)
    (match_id,) = play(store, "g", 1)
    hot, record = history.get_match(store, lambda: archive, match_id)
    assert not hot.archived and json.loads(record)["match_id"] == match_id

    def unreachable() -> Engine:
        raise AssertionError("a hot match needs no database")

    assert history.get_match(store, unreachable, match_id)[0].match_id == match_id
    archiving.archive_pending(store, archive)
    cold, again = history.get_match(store, lambda: archive, match_id)
    assert cold.archived and json.loads(again) == json.loads(record)
    assert (cold.totals, cold.agent_ids, cold.faults) == (hot.totals, hot.agent_ids, hot.faults)
    assert hot.faults == [sum(f["seat"] == seat for f in json.loads(record)["faults"]) for seat in range(3)]
    with pytest.raises(NotFound):
        history.get_match(store, lambda: archive, "g-999")
