"""Moving finished matches from Redis to the archive (a real redis-server and SQLite/PostgreSQL):
exactly once in any crash order, rating history as rated, Redis forgets what the archive holds."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from arena.archive import queries
from arena.archive.writer import write
from arena.ladder import archiving, jobs, loop
from arena.ladder.ratings import replay, stored_ratings
from arena.ladder.redis_store import RedisStore

from ..ladder.helpers import builtin_ladder


def play(store: RedisStore, ladder: str, matches: int, rate: bool = True) -> list[str]:
    """Form and play ``matches`` matches in this process (rated unless ``rate`` is False)."""
    played: list[str] = []
    definition = store.get_ladder(ladder)
    while len(played) < matches:
        for match_id in loop.form_once(store, definition, None)[: matches - len(played)]:
            jobs.run_match(store, match_id, store.catch_up_ratings if rate else (lambda _: None), lease_s=5)
            played.append(match_id)
    return played


def hot_keys(store: RedisStore, match_ids: list[str]) -> int:
    return sum(store.client.exists(store.keys.match(m), store.keys.record(m)) for m in match_ids)


def test_archiving_moves_rated_matches_once_and_redis_forgets_them(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "t", bots=("heuristic", "random") * 3, seats=3)
    played = play(store, "t", 8)
    assert store.archive_backlog() == 8 and hot_keys(store, played) == 16
    drained = archiving.archive_pending(store, archive, batch=3)
    assert (drained.archived, drained.already, drained.waiting) == (8, 0, 0)
    assert store.archive_backlog() == 0 and hot_keys(store, played) == 0
    assert not store.client.exists(store.keys.rating_changes("t"))  # consumed with the matches
    assert archiving.archive_pending(store, archive).archived == 0
    assert queries.count_matches(archive, "t") == 8
    # the history's last point of each agent is its stored rating; the log replays to the same
    stored = stored_ratings(store.client, store.keys, "t")
    for agent, (mu, sigma) in stored.items():
        last = queries.rating_history(archive, "t", agent)[-1]
        assert (last.mu_after, last.sigma_after) == (mu, sigma)
    from_archive, _ = replay(queries.summary(m) for m in queries.in_log_order(archive, "t"))
    assert from_archive == stored
    record = queries.get_record(archive, played[0])
    assert record is not None and record["match_id"] == played[0]


def test_a_crash_between_the_sql_commit_and_the_redis_cleanup_writes_nothing_twice(
    store: RedisStore, archive: Engine
) -> None:
    builtin_ladder(store, "t", bots=("random",) * 6, seats=3)
    played = play(store, "t", 4)
    rules = store.get_ladder("t").rules().to_dict()
    items = store.for_archive(played[:2])
    write(archive, [archiving.finished_match(item, rules) for item in items if item])
    drained = archiving.archive_pending(store, archive)  # as after the crash: Redis still holds all four
    assert (drained.archived, drained.already) == (2, 2)
    assert queries.count_matches(archive) == 4 and store.archive_backlog() == 0


def test_unrated_matches_wait_and_a_redelivered_run_after_archiving_does_nothing(
    store: RedisStore, archive: Engine
) -> None:
    builtin_ladder(store, "t", bots=("random",) * 6, seats=3)
    played = play(store, "t", 3, rate=False)
    assert archiving.archive_pending(store, archive).waiting == 3
    assert queries.count_matches(archive) == 0 and store.archive_backlog() == 3
    store.catch_up_ratings("t")
    assert archiving.archive_pending(store, archive).archived == 3
    assert jobs.run_match(store, played[0], store.catch_up_ratings, lease_s=5) == "missing"
    assert store.client.xlen(store.keys.log("t")) == 3  # logged once; nothing else came back


def test_the_backlog_waits_while_the_database_is_away(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "t", bots=("random",) * 6, seats=3)
    played = play(store, "t", 3)

    def down() -> Engine:
        raise OperationalError("connect", {}, ConnectionRefusedError("database down"))

    with pytest.raises(OperationalError):
        archiving.archive_pending(store, down)
    assert store.archive_backlog() == 3 and hot_keys(store, played) == 6
    assert not store.client.exists(store.keys.archive_lock)  # released: the next run may go
    assert archiving.archive_pending(store, archive).archived == 3


def test_a_second_drainer_backs_off_while_one_holds_the_lock(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "t", bots=("random",) * 6, seats=3)
    play(store, "t", 2)
    assert store.hold("archive_lock", "someone", 30)
    assert archiving.archive_pending(store, archive).busy
    store.release("archive_lock", "someone")
    assert archiving.archive_pending(store, archive).archived == 2


def test_forming_pauses_while_the_backlog_is_full(store: RedisStore, monkeypatch: pytest.MonkeyPatch) -> None:
    builtin_ladder(store, "t", bots=("random",) * 6, seats=3)
    play(store, "t", 2)
    monkeypatch.setenv("OHELL_ARCHIVE_BACKLOG_MAX", "2")
    sent: list[str] = []
    rounds = iter(range(3))
    stop: Callable[[], bool] = lambda: next(rounds, None) is None  # noqa: E731
    loop.run_forever(store, lambda m, q: sent.append(m), lambda _: None, stop, tick_s=0, sweep_every_s=100)
    assert sent == [] and store.archive_backlog() == 2


def test_matches_of_a_ladder_deleted_before_they_were_archived_are_archived(store: RedisStore, archive: Engine) -> None:
    """A ladder may be deleted once no match of it is in play, while its last finished matches still
    wait for the archive (it was away, or its task had not run yet). They were a poison pill: the
    drain looked their ladder's rules up, failed (NotFound) and archived nothing, theirs or any
    other ladder's, ever again; forming stops once the backlog is full. Their rules come from their
    records instead."""
    builtin_ladder(store, "gone", bots=("random",) * 6, seats=3)
    builtin_ladder(store, "kept", bots=("heuristic",) * 3, seats=3)
    played = play(store, "gone", 3)
    for match_id in store.active_matches():  # the tables formed beside them finish too
        jobs.run_match(store, match_id, store.catch_up_ratings, lease_s=5)
        played.append(match_id)
    rules = store.get_ladder("gone").rules().to_dict()
    store.delete_ladder("gone")
    kept = play(store, "kept", 2)
    drained = archiving.archive_pending(store, archive)
    assert drained.archived == len(played) + len(kept) and store.archive_backlog() == 0
    assert {m.match_id for m in queries.list_matches(archive, ladder="gone")} == set(played)
    assert {json.dumps(m.rules, sort_keys=True) for m in queries.list_matches(archive, ladder="gone")} == {
        json.dumps(rules, sort_keys=True)
    }
