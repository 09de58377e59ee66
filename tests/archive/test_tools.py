"""Host tools on the archive (``ohell ladder export --database-url``, ``ohell ladder rebuild --from archive``) and
Redis's footprint: what a finished match costs once archived, spectate streams that expire."""

from __future__ import annotations

import asyncio
import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from sqlalchemy import Engine

from arena.archive import queries
from arena.archive.db import DATABASE_URL_ENV, connect
from arena.cli import build_parser, main
from arena.embedded_redis import EmbeddedRedis
from arena.keys import DEFAULT_PREFIX, MATCH_EVENTS_MAXLEN, MATCH_EVENTS_TTL_S, PREFIX_ENV, Keys
from arena.ladder import archiving
from arena.ladder.ratings import stored_ratings
from arena.ladder.redis_store import RedisStore
from arena.local.config import CONFIG_ENV, resolve
from arena.play.events import RedisEventLog
from arena.proto.ohell.v1 import spectate_pb2
from arena.rpc.settings import shown_url
from ohell.errors import OhHellError

from ..ladder.helpers import builtin_ladder
from .test_archiving import play


@pytest.fixture
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ohell up's data folder (mode 700) as the commands find it: in $OHELL_DATA_DIR, with no archive URL
    in the environment and no config file (the working directory is the folder above it)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    monkeypatch.setenv("OHELL_DATA_DIR", str(data))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    return data


def test_export_writes_every_archived_match(store: RedisStore, archive: Engine, tmp_path: Path) -> None:
    builtin_ladder(store, "x", bots=("random",) * 6, seats=3)
    played = play(store, "x", 5)
    archiving.archive_pending(store, archive)
    url = archive.url.render_as_string(hide_password=False)
    out = tmp_path / "x"
    assert main(["ladder", "export", "x", "--out", str(out), "--database-url", url]) == 0
    records = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert [r["match_id"] for r in records] == played and all(r["format"] == "ohell-match-record" for r in records)
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 15 and {r["agent_name"] for r in rows} <= {f"x-random-{i}" for i in range(6)}
    by_match = {m: [int(r["points"]) for r in rows if r["match_id"] == m] for m in played}
    assert all(by_match[r["match_id"]] == r["totals"] for r in records)
    assert not (out / "leaderboard.csv").exists()  # ratings live in Redis: only through the stack
    assert main(["ladder", "export", "nothing", "--out", str(tmp_path / "n"), "--database-url", url]) == 2
    assert main(["ladder", "export", "x", "--out", str(out), "--database-url", url, "--limit", "2"]) == 2
    missing = f"sqlite:///{tmp_path / 'typo.db'}"
    for wrong in (missing, "nonsense", "bogus://"):
        assert main(["ladder", "export", "x", "--out", str(tmp_path / "w"), "--database-url", wrong]) == 2
    assert not (tmp_path / "typo.db").exists() and not (tmp_path / "w").exists()


def lose_the_archived_log(store: RedisStore, archive: Engine) -> dict[str, Any]:
    """Ladder r with six matches archived and two more only in its log, which then loses the archived
    ones, and its ratings lost too; the ratings it had."""
    builtin_ladder(store, "r", bots=("heuristic", "random") * 3, seats=3)
    play(store, "r", 6)
    archiving.archive_pending(store, archive)
    play(store, "r", 2)  # rated, not archived yet: only the log has them
    before = stored_ratings(store.client, store.keys, "r")
    store.client.xtrim(store.keys.log("r"), maxlen=2, approximate=False)  # the log lost its archived entries
    store.client.delete(store.keys.ratings("r"), store.keys.stats("r"), store.keys.board("r"))
    return before


def test_rebuild_from_the_archive_after_redis_lost_the_log(
    store: RedisStore, archive: Engine, redis_server: EmbeddedRedis
) -> None:
    before = lose_the_archived_log(store, archive)
    url = archive.url.render_as_string(hide_password=False)
    assert main(["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "r"]) == 0
    assert stored_ratings(store.client, store.keys, "r") != before  # the log alone is not enough now
    args = ["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "r", "--from", "archive"]
    assert main([*args, "--database-url", url]) == 0
    assert stored_ratings(store.client, store.keys, "r") == before
    assert store.leaderboard("r", 0, 10)[1] == 6


def test_rebuild_takes_the_ladder_by_name_as_the_other_ladder_commands_do(
    store: RedisStore, redis_server: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell ladder rebuild class`` stopped with argparse's 'unrecognized arguments: class', where
    ``ladder show|pause|export class`` take the name so: only ``--ladder class`` was understood."""
    builtin_ladder(store, "r", bots=("heuristic", "random") * 3, seats=3)
    builtin_ladder(store, "s", bots=("random",) * 3, seats=3)
    play(store, "r", 2)
    capsys.readouterr()
    assert main(["ladder", "rebuild", "r", "--redis-url", redis_server.url]) == 0
    assert capsys.readouterr().out == "r: ratings rebuilt from 2 logged matches\n"  # r alone, not s too
    assert main(["ladder", "rebuild", "r", "--ladder", "s", "--redis-url", redis_server.url]) == 2
    assert "two ladders named: 'r' and --ladder 's'" in capsys.readouterr().err


def test_rebuild_from_the_archive_reads_the_data_folders_by_default(
    store: RedisStore, redis_server: EmbeddedRedis, data_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --database-url or $OHELL_DATABASE_URL it stopped with 'give --database-url', though ohell up
    keeps its archive in the data folder, where the command finds ohell up's Redis."""
    command = ["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "r", "--from", "archive"]
    assert main(command) == 2
    said = " ".join(capsys.readouterr().err.split())
    give = f"give --database-url, or set {DATABASE_URL_ENV} or database_url in ohell.toml"
    assert f"{give} (ohell up's archive {data_folder / 'archive.db'} is not there)" in said, said
    assert not (data_folder / "archive.db").exists()  # none made by asking
    archive = connect(f"sqlite:///{data_folder / 'archive.db'}")
    before = lose_the_archived_log(store, archive)
    archive.dispose()
    assert main(command) == 0
    assert stored_ratings(store.client, store.keys, "r") == before
    assert not open_files_named(data_folder / "archive.db")  # its engine disposed: it held the archive open
    assert (
        f"archive: sqlite:///{data_folder / 'archive.db'} (ohell up's, in its data folder from $OHELL_DATA_DIR)"
        in capsys.readouterr().out
    )


def open_files_named(path: Path) -> list[str]:
    """This process's descriptors open on ``path``."""
    fds = Path("/proc/self/fd")
    return [fd.name for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve())]


def test_a_rebuild_while_matches_keep_being_rated_stops_and_says_to_pause_the_ladder(
    store: RedisStore, redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell ladder rebuild`` beside a running stack began its replay again whenever a match was rated
    meanwhile: on a busy ladder whose replay takes longer than the time between two matches, for ever,
    saying nothing. It stops after a few tries, writing nothing, and says to pause the ladder."""
    from arena.ladder import ratings

    builtin_ladder(store, "r", bots=("random",) * 6, seats=3)
    play(store, "r", 3)
    before = stored_ratings(store.client, store.keys, "r")
    rated, replayed = store.keys.rated("r"), []
    add_stats = ratings.add_stats

    def add_stats_as_a_worker_rates(stats: dict[str, list[int]], summary: dict[str, Any]) -> None:
        add_stats(stats, summary)
        replayed.append(summary["match_id"])
        if len(replayed) <= 50:  # a match rated meanwhile, as a worker writes it: the rating cursor moves
            store.client.set(rated, store.client.get(rated) or b"")

    monkeypatch.setattr(ratings, "add_stats", add_stats_as_a_worker_rates)
    rebuild = ["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "r"]
    assert main(rebuild) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert (
        f"ladder r: its matches were rated while its ratings were replayed ({ratings.REBUILD_TRIES} tries; nothing"
        " written): pause it (`ohell ladder pause r`), run the rebuild again once its matches in play have ended"
    ) in said, said
    assert len(replayed) == 3 * ratings.REBUILD_TRIES
    assert stored_ratings(store.client, store.keys, "r") == before
    monkeypatch.setattr(ratings, "add_stats", add_stats)  # the ladder paused: nothing rated meanwhile
    assert main(rebuild) == 0
    assert stored_ratings(store.client, store.keys, "r") == before


def test_rebuild_reads_no_archive_or_redis_url_another_user_may_have_put_in_the_data_folder(
    store: RedisStore,
    redis_server: EmbeddedRedis,
    data_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A data folder others may write in (the commands neither dial its sockets nor read its
    host-token): its archive.db was rebuilt from, as the host's matches, and its redis-url given
    the ratings."""
    archive = connect(f"sqlite:///{data_folder / 'archive.db'}")
    lose_the_archived_log(store, archive)
    archive.dispose()
    (data_folder / "redis-url").write_text(redis_server.url + "\n")
    data_folder.chmod(0o770)
    monkeypatch.delenv("REDIS_URL", raising=False)
    for command, file in (
        (["--redis-url", redis_server.url, "--from", "archive"], "archive"),
        (["--from", "log"], "Redis URL file"),
    ):
        assert main(["ladder", "rebuild", "--ladder", "r", *command]) == 2
        said = " ".join(capsys.readouterr().err.split())
        assert f"ohell up's {file} {data_folder}" in said and f"not read: others may write in {data_folder}" in said, (
            said
        )


def test_rebuild_reads_the_key_prefix_of_the_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ohell ladder rebuild --prefix`` defaulted to 'ohell:' whatever $OHELL_REDIS_PREFIX said, while
    the engine, the matchmaker and the workers take their keys' prefix from it: on a stack with
    another prefix the rebuild found no ladder."""
    monkeypatch.setenv(PREFIX_ENV, "lab:")
    assert build_parser().parse_args(["ladder", "rebuild"]).prefix == "lab:"
    monkeypatch.delenv(PREFIX_ENV)
    assert build_parser().parse_args(["ladder", "rebuild"]).prefix == DEFAULT_PREFIX


def test_an_archived_match_costs_redis_at_most_one_kilobyte(store: RedisStore, archive: Engine) -> None:
    builtin_ladder(store, "m", bots=("heuristic",) * 6, seats=3)
    play(store, "m", 3)
    archiving.archive_pending(store, archive)

    def footprint() -> int:
        return sum(int(store.client.memory_usage(key, samples=0) or 0) for key in store.client.scan_iter(count=1000))

    first = footprint()
    played = play(store, "m", 40)
    hot = footprint()
    archiving.archive_pending(store, archive)
    after = footprint()
    assert (hot - first) / len(played) > 2048  # the records (of these short games) were in Redis ...
    assert (after - first) / len(played) <= 1024  # ... and only the log's summary stays
    assert queries.count_matches(archive, "m") == 43


def test_every_spectate_write_caps_the_stream_and_renews_its_expiry(redis_server: EmbeddedRedis) -> None:
    async def run() -> tuple[int, int]:
        client = redis.asyncio.Redis.from_url(redis_server.url)
        log = RedisEventLog(client, Keys())
        key = Keys().match_events("s-1")
        await log.append("s-1", spectate_pb2.MatchEvent(sequence=5))  # a write after a lost first one
        ttl = int(await client.ttl(key))
        await client.persist(key)
        await log.append_many("s-1", [spectate_pb2.MatchEvent(sequence=n) for n in range(6, 9)])
        again = int(await client.ttl(key))
        await client.aclose()
        return ttl, again

    ttl, again = asyncio.run(run())
    assert 0 < ttl <= MATCH_EVENTS_TTL_S and 0 < again <= MATCH_EVENTS_TTL_S
    assert MATCH_EVENTS_MAXLEN <= 20_000


@pytest.mark.slow
def test_export_with_the_stack_down_names_the_archive_it_could_read_instead(
    data_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said only that the matchmaker could not be reached, though the archive of ``ohell up``
    lay in the data folder and --database-url reads it with no stack running."""
    monkeypatch.delenv("OHELL_MATCHMAKER_ADDRESS", raising=False)
    command = ["ladder", "export", "main", "--out", str(data_folder.parent / "out"), "--matchmaker", "127.0.0.1:1"]
    assert main(command) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "cannot reach the matchmaker at 127.0.0.1:1" in said and "--database-url URL" in said, said
    (data_folder / "archive.db").touch()
    assert main(command) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert f"--database-url sqlite:///{data_folder / 'archive.db'}" in said, said


@pytest.mark.slow
def test_the_archive_of_ohell_toml_is_the_one_rebuild_reads_and_export_names(
    store: RedisStore,
    archive: Engine,
    redis_server: EmbeddedRedis,
    data_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``ohell up`` takes its archive from --database-url, $OHELL_DATABASE_URL, ohell.toml, else the data
    folder's archive.db; the rebuild and export's hint skipped ohell.toml, and so named or read another
    archive (the data folder's) than the one the stack wrote."""
    url = archive.url.render_as_string(hide_password=False)
    before = lose_the_archived_log(store, archive)
    (data_folder / "archive.db").touch()  # not the configured one
    config = data_folder.parent / "ohell.toml"
    config.write_text(f"database_url = {json.dumps(url)}\n")
    from_file = f"{shown_url(url)} (from database_url in the config file ohell.toml)"
    rebuild = ["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "r", "--from", "archive"]
    assert main(rebuild) == 0
    assert f"archive: {from_file}" in capsys.readouterr().out
    assert stored_ratings(store.client, store.keys, "r") == before
    export = ["ladder", "export", "r", "--out", str(data_folder.parent / "out"), "--matchmaker", "127.0.0.1:1"]
    assert main(export) == 2
    assert f"--database-url {from_file}" in " ".join(capsys.readouterr().err.split())
    monkeypatch.setenv(DATABASE_URL_ENV, "sqlite:////nowhere/env.db")  # the environment wins over the file
    assert main(export) == 2
    assert f"--database-url sqlite:////nowhere/env.db (from ${DATABASE_URL_ENV})" in capsys.readouterr().err
    monkeypatch.delenv(DATABASE_URL_ENV)
    elsewhere = data_folder.parent / "elsewhere"  # data_dir in the file: the stack's archive.db is there
    elsewhere.mkdir(mode=0o700)
    (elsewhere / "archive.db").touch()
    config.write_text(f"data_dir = {json.dumps(str(elsewhere))}\n")
    monkeypatch.delenv("OHELL_DATA_DIR")
    assert main(export) == 2
    said = " ".join(capsys.readouterr().err.split())
    source = "ohell up's, in its data folder from data_dir in the config file ohell.toml"
    assert f"--database-url sqlite:///{elsewhere / 'archive.db'} ({source})" in said, said
    config.write_text('database_url = "nonsense://"\n')  # a URL it cannot use says where it came from
    assert main(rebuild) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "the archive nonsense://: " in said and "(from database_url in the config file ohell.toml)" in said, said


@pytest.mark.parametrize("planted", ["link", "second name"])
def test_an_ohell_toml_another_user_may_have_put_in_the_working_folder_is_not_read(
    redis_server: EmbeddedRedis, data_folder: Path, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Since the rebuild reads ohell.toml's archive, a ./ohell.toml in a folder others may write in
    (/tmp) would have given it another user's database to take the ratings from (ohell up, its host
    token file): only one of the user's alone is read without being named."""
    theirs = data_folder.parent / "theirs.toml"
    theirs.write_text('database_url = "postgresql://them@evil.example/ratings"\n')
    here = data_folder.parent / "ohell.toml"
    if planted == "link":
        here.symlink_to(theirs)
    else:
        here.hardlink_to(theirs)
    rebuild = ["ladder", "rebuild", "--redis-url", redis_server.url, "--from", "archive"]
    assert main(rebuild) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "config file ohell.toml: not a file of yours alone: not read" in said and "evil" not in said, said
    with pytest.raises(OhHellError, match="not a file of yours alone"):
        resolve({}, {})  # ohell up's settings alike
    assert resolve({}, {CONFIG_ENV: str(here)})["database_url"].endswith("/ratings")  # named: read
