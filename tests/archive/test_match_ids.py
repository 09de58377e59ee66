"""Match ids after Redis lost its counter (a real redis-server and SQLite/PostgreSQL): the archive
never takes a second match under an id it holds, and the counter is raised past the archive's ids."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.archive import queries
from arena.archive.db import connect, sqlite_url
from arena.embedded_redis import EmbeddedRedis
from arena.ladder import archiving
from arena.ladder.redis_store import RedisStore
from arena.local.stack import PORT_LINE, Proc

from ..ladder.helpers import builtin_ladder
from .test_archiving import play


def lose_counter(store: RedisStore) -> None:
    """As after a crash that lost the last second of the AOF, or a wipe of Redis that kept the archive."""
    store.client.delete(store.keys.match_seq)


def test_a_reused_match_id_is_refused_and_both_matches_are_kept(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "t", bots=("heuristic", "random", "random"), seats=3)  # one table at a time
    first = play(store, "t", 2)
    assert archiving.archive_pending(store, archive).archived == 2
    archived_record = queries.get_record_json(archive, first[0])
    lose_counter(store)
    [again] = play(store, "t", 1)
    assert again == first[0]  # the counter went back: the id is handed out twice
    drained = archiving.archive_pending(store, archive)
    assert (drained.archived, drained.already, drained.conflicts) == (0, 0, 1)
    assert queries.get_record_json(archive, again) == archived_record  # the archived match is untouched
    assert store.refused_by_archive() == [again] and store.archive_backlog() == 0  # set aside ...
    kept = store.for_archive([again])[0]  # ... the new match kept whole in Redis
    assert kept is not None and archiving.finished_match(kept, {}).record()["match_id"] == again
    assert archiving.archive_pending(store, archive).conflicts == 0  # met once
    # and the counter is past the archive's ids now: the next match has a fresh one
    [fresh] = play(store, "t", 1)
    assert fresh == "t-3"
    assert archiving.archive_pending(store, archive).archived == 1


def test_the_counter_is_raised_to_the_archives_highest_id_and_never_lowered(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "t", bots=("random",) * 3, seats=3)  # one table at a time
    play(store, "t", 3)
    archiving.archive_pending(store, archive)
    lose_counter(store)
    assert archiving.raise_match_seq(store, archive) == 3
    assert play(store, "t", 1) == ["t-4"]
    store.client.set(store.keys.match_seq, 10)
    assert archiving.raise_match_seq(store, archive) == 10  # set only if greater
    assert queries.highest_match_number(archive) == 3


@pytest.mark.slow
def test_the_matchmaker_raises_the_counter_when_it_starts(
    redis_server: EmbeddedRedis, store: RedisStore, tmp_path: Path
) -> None:
    archive = connect(sqlite_url(tmp_path))
    try:
        builtin_ladder(store, "t", bots=("random",) * 3, seats=3)
        play(store, "t", 2)
        archiving.archive_pending(store, archive)
    finally:
        archive.dispose()
    store.set_paused("t", True)  # no table formed: the counter is what the start made it
    lose_counter(store)
    command = [sys.executable, "-m", "services.matchmaker", "--address", "127.0.0.1:0"]
    command += ["--redis-url", redis_server.url, "--database-url", sqlite_url(tmp_path)]
    proc = Proc("matchmaker", command, {}, tmp_path / "matchmaker.log")
    try:
        proc.wait_for(PORT_LINE, 60)  # it serves once the counter is raised
        assert int(store.client.get(store.keys.match_seq) or 0) == 2
    finally:
        proc.stop()
