"""What the tournament RPCs do, without servers: entrants from text, requests to tournaments (errors
naming the field), the host form, and the standings cache and overview on a real redis-server."""

from __future__ import annotations

import json
import math
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.play.specs import check_endpoint
from arena.proto.ohell.v1 import rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.tournament import jobs, operations
from arena.tournament.messages import entrant_from_text
from arena.tournament.model import Tournament, TournamentError, parse_entrant
from arena.tournament.standings import Standing
from arena.tournament.store import TournamentStore
from ohell.errors import OhHellError
from services.matchmaker.tournaments import tournament_from_proto, tournament_to_proto
from services.web.tournaments import tournament_from_form

from .test_store_jobs import Queue, builtins

SHORT = {"hand_sizes": [1]}


def test_entrants_from_text() -> None:
    assert parse_entrant("builtin:strong").name == "strong"
    assert parse_entrant(" connected:a12=alice ").agent_id == "a12"
    assert parse_entrant("endpoint:10.0.0.5:7000=bob").address == "10.0.0.5:7000"
    assert entrant_from_text("endpoint:bots.example:7000").endpoint == "bots.example:7000"
    assert entrant_from_text("builtin:random=r1").WhichOneof("player") == "bot"
    for text, words in (
        ("robot:x", "expected builtin"),
        ("builtin:nope", "not a built-in bot"),
        ("builtin:random=has space", "name"),
        ("endpoint:no-port", "host:port"),
        ("connected:", "agent_id"),
        ("builtin:random=" + "x" * 65, "name"),
    ):
        with pytest.raises(TournamentError, match=words):
            parse_entrant(text)


@pytest.mark.parametrize(
    ("address", "taken"),
    [
        ("bot.example:7000", True),
        ("bot_1.internal:7000", True),  # a compose service's name: taken by RegisterAgent, refused here
        ("[::1]:7000", True),  # IPv6 in brackets: likewise
        ("bot.example:0", False),  # ports no one can dial: taken here, refused by RegisterAgent
        ("bot.example:65536", False),
        ("unix:sock:80", False),  # gRPC target schemes: RegisterAgent took them, and the platform
        ("unix-abstract:bot:80", False),  # dialled a local unix socket ("sock:80", abstract "bot:80")
        ("dns:bot.example:80", False),
        ("::1:7000", False),  # IPv6 without brackets: which colon starts the port?
    ],
)
def test_an_entrant_endpoint_is_checked_as_every_endpoint_address(address: str, taken: bool) -> None:
    """Three checks of one thing disagreed: a tournament entrant's own pattern, RegisterAgent's and
    the host's challenge seats' (``check_endpoint``); now there is one, naming the field."""
    entrants = [tpb.TournamentEntrant(endpoint=address), *good().entrants]
    checks: list[Callable[[], object]] = [
        lambda: parse_entrant(f"endpoint:{address}=e"),
        lambda: tournament_from_proto(tpb.Tournament(tournament_id="t", entrants=entrants)),
        lambda: check_endpoint(address),
    ]
    for check in checks:
        if taken:
            check()
        else:
            with pytest.raises(OhHellError, match=r"endpoint: '.*' must look like host:port"):
                check()


def good() -> tpb.Tournament:
    entrants = [tpb.TournamentEntrant(bot=b) for b in ("strong", "heuristic", "random")]
    return tpb.Tournament(tournament_id="t1", entrants=entrants, rules=rules_pb2.Rules(preset="classic"))


def test_requests_become_tournaments_with_defaults_and_back() -> None:
    tourney = tournament_from_proto(good())
    assert (tourney.seats, tourney.deals, tourney.rounds, tourney.grace_s, tourney.format) == (
        3,
        2,
        1,
        30.0,
        "round-robin",
    )
    message = good()
    message.rules.hand_sizes.extend([3, 2, 1])
    message.grace_seconds = 0
    tourney = tournament_from_proto(message)
    assert tourney.overrides == {"hand_sizes": [3, 2, 1]}  # only what differs from the preset
    assert tourney.grace_s == 0 and list(tourney.rules().hand_sizes) == [3, 2, 1]
    back = tournament_to_proto(tourney)
    assert list(back.rules.hand_sizes) == [3, 2, 1] and back.rules.preset == "classic" and back.grace_seconds == 0
    assert tournament_from_proto(back) == tourney  # a stored definition reads back the same


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tournament_id": "UPPER"}, "tournament.tournament_id"),
        ({"seats": 2}, "tournament.seats"),
        ({"deals": 51}, "tournament.deals"),
        ({"rounds": 21}, "tournament.rounds"),
        ({"format": 3}, "tournament.format"),
        ({"grace_seconds": math.inf}, "tournament.grace_seconds"),
        ({"grace_seconds": 600.5}, "tournament.grace_seconds"),
    ],
)
def test_bad_requests_name_the_field(change: dict[str, object], field: str) -> None:
    message = good()
    for name, value in change.items():
        setattr(message, name, value)
    with pytest.raises(TournamentError, match=field):
        tournament_from_proto(message)


def test_an_entrant_name_a_spreadsheet_would_read_as_a_formula_is_refused() -> None:
    """Names go into the standings CSV the host opens in a spreadsheet, which reads a cell starting
    with '-' as a formula ("-A1" shows another cell's value); agent versions were refused so already."""
    message = good()
    message.entrants[1].name = "-A1"
    with pytest.raises(TournamentError, match=r"tournament\.entrants\[1\]\.name"):
        tournament_from_proto(message)
    message.entrants[1].name = "A1-"
    assert tournament_from_proto(message).entrants[1].name == "A1-"


@pytest.mark.parametrize("tourney_id", ["Cup", "-cup", "_cup", "c" * 41, ""])
def test_a_bad_tournament_id_is_refused_in_words(tourney_id: str) -> None:
    """The refusal quoted the pattern ("must match ^[a-z0-9][a-z0-9_-]{0,39}$"): a regular expression
    for a host to decode at the command line and on the host page."""
    rule = "must be 1-40 characters of a-z, 0-9, '_' and '-', the first a letter or digit"
    with pytest.raises(TournamentError) as refused:
        operations.check_id(tourney_id, "tournament.tournament_id")
    assert str(refused.value) == f"tournament.tournament_id: {tourney_id!r} {rule}"
    with pytest.raises(TournamentError) as refused:
        Tournament(tourney_id, builtins("random", "heuristic", "strong"))
    assert str(refused.value) == f"tourney_id: {tourney_id!r} {rule}"


def test_a_connected_entrant_without_a_name_is_sent_unnamed() -> None:
    """`ohell tournament create --entrant connected:a12` and the host page sent the entrant named
    'a12' (its agent id), so the matchmaker, which names only an unnamed one as its agent is
    registered, kept 'a12' in the standings, against docs/tournaments.md ('alice', not 'a12')."""
    assert entrant_from_text("connected:a12").name == ""
    assert entrant_from_text(" connected:a12 = ").name == ""  # an empty =NAME is no name either
    assert entrant_from_text("connected:a12").agent_id == "a12"
    assert entrant_from_text("connected:a12=alice").name == "alice"
    message = tournament_from_form({"tournament_id": "cup", "entrants": "connected:a3\nbuiltin:random\nbuiltin:strong"})
    assert [entrant.name for entrant in message.entrants] == ["", "random", "strong"]


def test_host_form_to_request() -> None:
    form = {
        "tournament_id": "cup",
        "entrants": "builtin:strong\n\nbuiltin:heuristic=h\nconnected:a3=alice\n",
        "format": "swiss",
        "seats": "3",
        "rounds": "2",
        "deals": "1",
        "grace_seconds": "2.5",
        "preset": "classic",
        "options": "hand_sizes=[3,2,1]",
    }
    message = tournament_from_form(form)
    assert [e.name for e in message.entrants] == ["strong", "h", "alice"] and message.entrants[2].agent_id == "a3"
    assert (message.format, message.rounds, message.deals, message.grace_seconds) == (
        tpb.TOURNAMENT_FORMAT_SWISS, 2, 1, 2.5,
    )  # fmt: skip
    assert list(message.rules.hand_sizes) == [3, 2, 1] and message.rules.preset == "classic"
    for key, value, words in (
        ("seats", "three", "seats"),
        ("seats", "-1", "seats"),
        ("format", "knockout", "format"),
        ("preset", "nope", "rules"),
        ("entrants", "", "entrants"),
        ("entrants", "builtin:nope", "entrants"),
        ("entrants", "x" * 20_001, "characters"),
        ("options", "hand_sizes", "name=value"),
    ):
        with pytest.raises(Exception, match=words):
            tournament_from_form(form | {key: value})


@pytest.fixture
def tstore(shared_redis_server: EmbeddedRedis, request: pytest.FixtureRequest) -> Iterator[TournamentStore]:
    client = redis.Redis.from_url(shared_redis_server.url)
    yield TournamentStore(client, Keys(f"ops-{request.node.name[:40]}:"))
    client.close()


def test_overview_and_the_standings_cache(tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    tourney = Tournament("ov", builtins("strong", "heuristic", "random"), deals=1, overrides={"hand_sizes": [2, 1]})
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    cache = operations.StandingsCache(fresh_s=60.0)
    before = operations.overview(tstore, "ov", 100, cache)
    assert before.standings == [] and before.games_total == 3 and before.progress.state == "running"
    assert [(t.table_id, t.state, t.games_done, t.games) for t in before.tables] == [("r1t0", "queued", 0, 3)]
    queue.drain(tstore)
    after = operations.overview(tstore, "ov", 100, cache)  # finished since: computed again, though fresh
    assert after.progress.state == "finished" and len(after.standings) == 3
    assert [(t.state, t.games_done) for t in after.tables] == [("finished", 3)]
    assert operations.overview(tstore, "ov", 100, cache).standings is after.standings  # nothing new: cached
    assert after.standings == operations.current_standings(tstore, "ov", 100)
    with pytest.raises(TournamentError, match="replicates"):
        operations.check_replicates(10_001)
    with pytest.raises(TournamentError, match="tournament_id"):
        operations.overview(tstore, "../x")
    with pytest.raises(TournamentError, match="format"):
        operations.export(tstore, "ov", "xml")
    pieces, finished = operations.export(tstore, "ov", "csv", 100)
    text = "".join(pieces)
    assert finished and text.splitlines()[0].startswith("rank,entrant")
    computed: list[object] = []
    monkeypatch.setattr(operations, "current_standings", lambda *args: computed.append(args) or [])
    pieces, finished = operations.export(tstore, "ov", "csv", 100, cache)
    assert ("".join(pieces), finished) == (text, True)  # an export reads the cache too
    assert computed == []


def test_final_standings_stay_cached_whatever_else_is_read(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache kept its ``size`` most recent tournaments, finished ones too: reading one more
    finished tournament than that in turn (any caller may, through GetTournament) computed a
    bootstrap on every read, a fraction of a CPU second each for a tournament of some hundred games."""
    names = ("f0", "f1", "f2")
    for name in names:
        queue = Queue()
        jobs.start(tstore, Tournament(name, builtins("heuristic", "random", "random"), deals=1, overrides=SHORT), queue)
        queue.drain(tstore)
    cache = operations.StandingsCache(size=2)
    for name in names:
        operations.overview(tstore, name, 100, cache)
    computed: list[object] = []
    monkeypatch.setattr(operations, "current_standings", lambda *args: computed.append(args) or [])
    for name in names * 2:
        assert len(operations.overview(tstore, name, 100, cache).standings) == 3
    assert computed == []


def test_a_running_tournaments_tables_are_read_at_most_once_per_fresh_period(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GetTournament (every reader of a tournament's page, every 2 s, and any caller at will) read
    every table's state each time: a tenth of a second for the 6,800 tables of 200 entrants at 3
    seats, so a hundred calls a second kept the matchmaker busy."""
    jobs.start(
        tstore, Tournament("busy", builtins("heuristic", "random", "random", "random"), overrides=SHORT), Queue()
    )
    reads: list[str] = []
    read = operations.tables
    monkeypatch.setattr(
        operations, "tables", lambda store, tourney: reads.append(tourney.tourney_id) or read(store, tourney)
    )
    cache = operations.StandingsCache(fresh_s=60.0)
    views = [operations.overview(tstore, "busy", 100, cache).tables for _ in range(3)]
    assert reads == ["busy"] and views[0] == views[2] and len(views[0]) == 4
    operations.overview(tstore, "busy", 100, operations.StandingsCache(fresh_s=0.0))
    assert reads == ["busy", "busy"]  # stale at once: read again


class CountingConnection(redis.Connection):
    """A connection that counts what it sends: one count per round trip (a pipeline is one)."""

    sent = 0

    def send_packed_command(self, command: object, check_health: bool = True) -> None:
        CountingConnection.sent += 1
        super().send_packed_command(command, check_health)  # type: ignore[arg-type]


def test_a_page_of_tournaments_is_read_in_two_round_trips(shared_redis_server: EmbeddedRedis) -> None:
    """ListTournaments read each tournament's spec and progress apart: 3 round trips (and 2 thread
    hops) per tournament, 1,500 for a page of 500. Now the ids, then one pipeline; the same summaries."""
    pool = redis.ConnectionPool.from_url(shared_redis_server.url, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    store = TournamentStore(client, Keys("pages:"))
    names = [f"p{n}" for n in range(12)]
    for name in names:
        jobs.start(
            store, Tournament(name, builtins("heuristic", "random", "random"), deals=1, overrides=SHORT), Queue()
        )
    CountingConnection.sent = 0
    page, more = operations.page_of_summaries(store, 2, 8)
    assert CountingConnection.sent == 2 and more
    assert page == [(store.get(name).summary(), store.progress(name)) for name in sorted(names)[2:10]]
    assert operations.page_of_summaries(store, 10, 8) == (
        [(store.get(n).summary(), store.progress(n)) for n in sorted(names)[10:]],
        False,
    )
    client.close()


def test_a_page_of_tournaments_parses_no_definition(tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """ListTournaments (public) parsed and checked again every listed tournament's full definition:
    some 0.9 ms for one of 200 entrants, 0.46 s of the matchmaker's CPU for a page of 500, per
    anonymous call. A page now reads the summary stored when each tournament was created; one
    created before summaries were stored is still listed, from its definition."""
    names = ["q0", "q1", "q2"]
    for name in names:
        jobs.start(
            tstore, Tournament(name, builtins("heuristic", "random", "random"), deals=1, overrides=SHORT), Queue()
        )
    tstore.client.hdel(tstore.keys.tourney("q1"), "summary")  # as stored before summaries were
    parsed: list[str] = []
    real_from_json = Tournament.from_json.__func__  # type: ignore[attr-defined]

    def counting_from_json(cls: type[Tournament], text: str | bytes) -> Tournament:
        tourney = real_from_json(cls, text)
        parsed.append(tourney.tourney_id)
        return tourney

    monkeypatch.setattr(Tournament, "from_json", classmethod(counting_from_json))
    page, more = operations.page_of_summaries(tstore, 0, 10)
    assert parsed == ["q1"]
    monkeypatch.undo()
    assert page == [(tstore.get(name).summary(), tstore.progress(name)) for name in names] and not more


def test_a_json_export_holds_a_few_records_at_a_time(tstore: TournamentStore) -> None:
    """The JSON export of a finished tournament (public: ExportTournament, the web page's link) parsed
    every record and wrote the whole document at once: a peak of 1.7 GB and a minute of CPU for 3,000
    games of classic rules, per call. Its pieces now carry the stored records' text a batch at a time,
    and join to the same document."""
    entrants = builtins("random", "random", "heuristic", "random", "random", "heuristic")
    queue = Queue()
    jobs.start(tstore, Tournament("big", entrants, seats=3, deals=2, overrides={"hand_sizes": [5, 4, 3]}), queue)
    queue.drain(tstore)
    records = tstore.records("big")
    stored = sum(len(json.dumps(record)) for record in records.values())
    tracemalloc.start()
    try:
        pieces, finished = operations.export(tstore, "big", "json", 100)
        sent = sum(len(piece) for piece in pieces)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert finished and len(records) == 120 and sent > stored
    assert peak < stored, f"the export held {peak} bytes at once for {stored} bytes of records"
    document = json.loads("".join(operations.export(tstore, "big", "json", 100)[0]))
    assert document["records"] == records and document["deals"] == tstore.deals("big")
    assert document["tournament"] == "big" and document["finished"] and len(document["standings"]) == 6


def test_a_refused_field_says_how_to_mend_it() -> None:
    """Two built-in entrants of one bot were refused as "'random' is given twice", saying nothing of
    =NAME, and more seats than entrants as "3 entrants cannot fill a table of 4 seats", naming no field."""
    with pytest.raises(TournamentError) as refused:
        Tournament(
            "t", (parse_entrant("builtin:random"), parse_entrant("builtin:random"), parse_entrant("builtin:strong"))
        )
    assert str(refused.value) == (
        "entrants: every entrant needs its own name; 'random' is given twice: tell them apart with =NAME "
        "(builtin:random=random-2)"
    )
    with pytest.raises(TournamentError) as refused:
        Tournament("t", builtins("random", "heuristic", "strong"), seats=4)
    assert str(refused.value) == "seats: 3 entrants cannot fill a table of 4 seats"


@pytest.mark.parametrize("second", ["connected:a7=alice", "connected:a7=alice-2"])
def test_a_connected_agent_entered_twice_is_told_to_enter_once_not_to_rename(second: str) -> None:
    """One agent entered twice (both named as registered) was told to tell them apart with =NAME,
    which only moved the refusal on: an agent plays as itself, so it may enter once."""
    entrants = (parse_entrant("connected:a7=alice"), parse_entrant(second), *builtins("random", "strong"))
    with pytest.raises(TournamentError) as refused:
        Tournament("t", entrants, seats=3)
    assert str(refused.value) == (
        "entrants[1].agent_id: agent 'a7' is entrants[0] already: a connected agent plays as itself, from its one"
        " connection, so it enters once (=NAME only renames it); give it once"
    )


def test_a_bad_entrant_name_is_refused_with_the_whole_rule() -> None:
    """A name with a space was refused as "1-64 of letters, digits, '_', '.', ':', '-'", which '-A1'
    fits, and '-A1' then as "must not start with = + - @ (CSV formulas)", which 'a b' fits: each
    refusal gave half the rule."""
    rule = (
        "must be 1-64 characters of ASCII letters, digits, '_', '.', ':' and '-', not starting with '-' "
        "(a spreadsheet reads such a cell of the standings CSV as a formula)"
    )
    with pytest.raises(TournamentError) as refused:
        parse_entrant("builtin:random=a b")
    assert str(refused.value) == f"entrant 'builtin:random=a b'.name: 'a b' {rule}"
    message = good()
    message.entrants[1].name = "-A1"
    with pytest.raises(TournamentError) as refused:
        tournament_from_proto(message)
    assert str(refused.value) == f"tournament.entrants[1].name: '-A1' {rule}"


def test_a_running_tournaments_standings_are_computed_once_at_a_time_and_spaced_by_their_cost(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every GetTournament of a running tournament that had a new game computed the bootstrap again
    (once per 2 s at most, but every reader that came meanwhile computed one of its own): for 200
    entrants and 3,000 deals in play that is tens of seconds of CPU each, so eight anonymous readers
    took every thread the matchmaker's calls run in (its unrelated GetLadder took 14 s on average,
    up to its 60 s deadline). One computation at a time now; readers of a running tournament get
    the last standings meanwhile, and a computation that took T is not begun again within 10 T."""
    tourney = Tournament("slow", builtins("heuristic", "random", "random", "random"), overrides=SHORT)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    tourney_id, table = queue.sent.pop(0)
    jobs.run_table(tstore, tourney_id, table, queue, lease_s=5.0)
    computed: list[float] = []
    compute = operations.current_standings
    held = threading.Event()  # the computations after the first wait for it: a reader who waits is seen

    def costly(*args: object) -> list[Standing]:
        computed.append(time.monotonic())
        time.sleep(0.3)  # a bootstrap of thousands of deals takes seconds
        if len(computed) > 1:
            held.wait(30)
        return compute(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(operations, "current_standings", costly)
    # a new game makes the standings stale at once, but not for 3 times as long as they took (0.3 s)
    cache = operations.StandingsCache(fresh_s=0.0, spacing=3.0)

    def read_at_once(readers: int) -> list[list[Standing]]:
        with ThreadPoolExecutor(readers) as pool:
            progress = tstore.progress("slow")
            return list(pool.map(lambda _: cache.get(tstore, "slow", 100, progress), range(readers)))

    first = read_at_once(8)
    assert len(computed) == 1 and all(rows is first[0] for rows in first) and len(first[0]) == 3
    tourney_id, table = queue.sent.pop(0)
    jobs.run_table(tstore, tourney_id, table, queue, lease_s=5.0)  # a new game: stale
    with ThreadPoolExecutor(1) as outside:  # none waits: all are answered while no computation can end
        again = outside.submit(read_at_once, 8).result(timeout=10)
    assert all(rows is first[0] for rows in again)
    held.set()
    deadline = time.monotonic() + 10
    while cache.get(tstore, "slow", 100, tstore.progress("slow")) is first[0]:  # computed aside, once
        assert time.monotonic() < deadline, "the standings were not computed again"
        time.sleep(0.05)
    assert len(computed) == 2 and computed[1] - computed[0] >= 0.9
    queue.drain(tstore)  # more games, and the end: final standings are computed at once, once
    assert tstore.progress("slow").state == "finished"
    assert len(read_at_once(8)[0]) == 4 and len(computed) == 3


@pytest.mark.slow
def test_a_running_tournaments_tables_are_read_again_by_one_reader_at_a_time(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once its views were stale, every reader that came read the tables' states again, each its own
    second for 6,800 tables under load: eight readers at once took the matchmaker's threads. One
    reads them now; the others get the views read before."""
    jobs.start(
        tstore, Tournament("many", builtins("heuristic", "random", "random", "random"), overrides=SHORT), Queue()
    )
    reads: list[str] = []
    read = operations.tables

    def slowly(store: TournamentStore, tourney: Tournament) -> list[operations.TableView]:
        reads.append(tourney.tourney_id)
        time.sleep(1.0)  # the eight readers all come while it reads
        return read(store, tourney)

    monkeypatch.setattr(operations, "tables", slowly)
    cache = operations.StandingsCache(fresh_s=0.0)  # stale at once
    views = operations.overview(tstore, "many", 100, cache).tables
    with ThreadPoolExecutor(8) as pool:
        shown = list(pool.map(lambda _: operations.overview(tstore, "many", 100, cache).tables, range(8)))
    assert len(reads) == 2 and sum(tables is views for tables in shown) == 7 and len(views) == 4


def test_standings_whose_thread_could_not_start_are_computed_by_a_later_reader(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running tournament's standings computed aside claim the tournament until their thread ends;
    a thread that could not be started ("can't start new thread") failed its reader's call and left
    the claim for good: later readers got stale standings for ever, and once it ended each waited for
    ever for the claim. The reader gets the standings it had; a later one computes them."""
    tourney = Tournament("nothread", builtins("heuristic", "random", "random", "random"), overrides=SHORT)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    tourney_id, table = queue.sent.pop(0)
    jobs.run_table(tstore, tourney_id, table, queue, lease_s=5.0)
    cache = operations.StandingsCache(fresh_s=0.0, spacing=0.0)
    first = cache.get(tstore, "nothread", 100, tstore.progress("nothread"))
    tourney_id, table = queue.sent.pop(0)
    jobs.run_table(tstore, tourney_id, table, queue, lease_s=5.0)  # a new game: stale

    def no_thread(self: object) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patch:
        patch.setattr(operations.threading.Thread, "start", no_thread)
        assert cache.get(tstore, "nothread", 100, tstore.progress("nothread")) is first
    queue.drain(tstore)
    assert tstore.progress("nothread").state == "finished"
    with ThreadPoolExecutor(1) as pool:  # the final standings, not a wait for ever
        final = pool.submit(cache.get, tstore, "nothread", 100, tstore.progress("nothread")).result(timeout=30)
    assert len(final) == 4 and final is not first
