"""What the matchmaker's tournament RPCs do, as plain functions over the store (the servicer in
services/matchmaker/tournaments.py is a thin shell over them): create, list, one tournament's
overview (progress, tables, standings), export, one game's record, resume, cancel.

Nothing here hands out a deal set or a game record before the tournament has ended: the overview
holds only results (who played, the scores; the ids of the games recorded, shown once it has
ended), and the JSON export and ``game_record`` add the deals and records once the store publishes
them.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass

from arena.clock import now_ms
from arena.play.specs import without_addresses
from arena.tournament import jobs
from arena.tournament.away import AwayMark
from arena.tournament.model import (
    ID_PATTERN,
    ID_RULE,
    TablePlan,
    Tournament,
    TournamentEnded,
    TournamentError,
    TournamentNotFound,
    TournamentSummary,
)
from arena.tournament.standings import (
    DEFAULT_REPLICATES,
    MAX_REPLICATES,
    Standing,
    duplicate_observations,
    standings,
    to_csv,
    to_json,
)
from arena.tournament.store import ENDED, Progress, TournamentStore, not_found

log = logging.getLogger(__name__)

MAX_PAGE = 500
EXPORT_FORMATS = ("csv", "json")
# arena.tournament.play.game_id: "<table>/d<deal set>/r<rotation>", the table "r<round>t<index>"
TABLE_ID = r"r([0-9]{1,3})t([0-9]{1,6})"
TABLE_ID_PATTERN = re.compile(rf"^{TABLE_ID}$")
GAME_ID_PATTERN = re.compile(rf"^{TABLE_ID}/d([0-9]{{1,3}})/r([0-9]{{1,2}})$")
GAME_ID_RULE = "<table>/d<deal set>/r<rotation>, e.g. r1t0/d0/r2"


@dataclass(frozen=True)
class TableView:
    table_id: str
    round: int
    entrants: tuple[str, ...]
    state: str
    attempts: int
    games_done: int
    games: int
    forfeits: tuple[str, ...]
    waiting_for: tuple[str, ...] = ()  # connected entrants it waits for at its start (not online yet)
    waiting_until_ms: int = 0  # when that wait ends: whoever is still away forfeits the table
    game_ids: tuple[str, ...] = ()  # its games recorded, in play order (shown only once the tournament ended)


class StandingsPending(Exception):  # noqa: N818: not an error, a step of the read
    """Raised by a read that was told not to block (``block=False``) where it would wait for another
    reader's computation of the standings: ``done`` resolves when that computation ends (with its
    exception when it failed: the waiters fail with it); read again then. An asyncio caller awaits it
    (``asyncio.wrap_future``) without holding a thread."""

    def __init__(self, done: Future[None]) -> None:
        super().__init__("the standings are being computed by another reader")
        self.done = done


@dataclass(frozen=True)
class Overview:
    tourney: Tournament
    progress: Progress
    games_total: int
    tables: list[TableView]
    standings: list[Standing]
    away: list[AwayMark]  # while it runs: connected entrants forfeited without waiting (``jobs``)


def check_id(tourney_id: str, field: str = "tournament_id") -> str:
    if not ID_PATTERN.fullmatch(tourney_id):
        raise TournamentError(f"{field}: {tourney_id[:80]!r} must be {ID_RULE}")
    return tourney_id


def check_game_id(game: str, field: str = "game_id") -> str:
    if not GAME_ID_PATTERN.fullmatch(game):
        raise TournamentError(f"{field}: {game[:80]!r} must be {GAME_ID_RULE}")
    return game


def check_table_id(table: str, field: str = "table_id") -> str:
    if not TABLE_ID_PATTERN.fullmatch(table):
        raise TournamentError(f"{field}: {table[:80]!r} must be r<round>t<index>, e.g. r1t0")
    return table


def one_table(view: Overview, table: str) -> TableView:
    """The table ``table`` of a tournament's overview; NOT_FOUND naming ``table_id`` when it has none."""
    for candidate in view.tables:
        if candidate.table_id == table:
            return candidate
    raise TournamentNotFound(f"table_id: tournament {view.tourney.tourney_id!r} has no table {table!r}")


def play_order(game: str) -> tuple[int, ...]:
    """A checked game id's place at its table: by deal set, then rotation (d10 after d9)."""
    match = GAME_ID_PATTERN.fullmatch(game)
    return tuple(int(number) for number in match.groups()) if match else (-1,)


def check_replicates(replicates: int, field: str = "replicates") -> int:
    """0 means the default; 1..MAX_REPLICATES otherwise (the bootstrap's work grows with it)."""
    if not 0 <= replicates <= MAX_REPLICATES:
        raise TournamentError(f"{field}: {replicates} must be from 1 to {MAX_REPLICATES} (0 = {DEFAULT_REPLICATES})")
    return replicates or DEFAULT_REPLICATES


def games_total(tourney: Tournament | TournamentSummary, progress: Progress) -> int:
    """Games of the whole tournament: a round robin's tables all exist from the start; every Swiss
    round seats each entrant once, so it plays ``deals`` games per entrant per round."""
    if tourney.format == "swiss":
        return tourney.rounds * tourney.deals * tourney.entrant_count
    return progress.tables * tourney.seats * tourney.deals


class StandingsCache:
    """Standings are a bootstrap (thousands of resamples): computed again only when a game was
    recorded since, and while a tournament runs at most once per ``fresh_s`` (a page that refreshes,
    many readers) and never sooner after a computation than ``spacing`` times as long as it took:
    a running tournament of 200 entrants and thousands of deals takes seconds of CPU to bootstrap,
    and any caller may read it. One computation of a key at a time: while it runs, the other readers
    of a running tournament get the standings computed before it (it runs in a thread of its own once
    there are some), and those of a tournament never computed (or just ended) wait for its result
    (``block=False``: raise ``StandingsPending`` instead, to wait outside the thread).
    Thread-safe; keeps the ``size`` most recent running tournaments, and every
    ended (finished or cancelled) one's final standings (else reading more finished tournaments than ``size`` in turn
    would compute a bootstrap on every read). The tables' views too (thousands of tables are a
    tenth of a second to read): read again at most once per ``fresh_s`` while the tournament runs."""

    def __init__(self, fresh_s: float = 2.0, size: int = 64, spacing: float = 10.0) -> None:
        self.fresh_s = fresh_s
        self.size = size
        self.spacing = spacing
        self._lock = threading.Lock()
        # key -> (games done, state, when computed, its rows, seconds the computation took)
        self._rows: OrderedDict[tuple[str, str, int], tuple[int, str, float, list[Standing], float]] = OrderedDict()
        self._final: dict[tuple[str, str, int], list[Standing]] = {}
        self._computing: dict[tuple[str, str, int], Future[None]] = {}  # done when that computation ends
        self._tables: OrderedDict[tuple[str, str], tuple[str, float, list[TableView]]] = OrderedDict()
        self._reading: set[tuple[str, str]] = set()  # tournaments whose tables one reader reads again

    def tables(self, store: TournamentStore, tourney: Tournament, progress: Progress) -> list[TableView]:
        """While one reader reads a running tournament's tables again, the others get them as read before."""
        key = (store.keys.prefix, tourney.tourney_id)
        now = time.monotonic()
        with self._lock:
            cached = self._tables.get(key)
            if cached is not None:
                state, at, views = cached
                if state == progress.state and (state in ENDED or now - at < self.fresh_s or key in self._reading):
                    return views
            self._reading.add(key)
        try:
            views = tables(store, tourney)
        finally:
            with self._lock:
                self._reading.discard(key)
        with self._lock:
            self._tables[key] = (progress.state, now, views)
            self._tables.move_to_end(key)
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)
        return views

    def get(
        self, store: TournamentStore, tourney_id: str, replicates: int, progress: Progress, block: bool = True
    ) -> list[Standing]:
        key = (store.keys.prefix, tourney_id, replicates)
        while True:
            now = time.monotonic()
            with self._lock:
                final = self._final.get(key) if progress.state in ENDED else None
                if final is not None:
                    return final
                cached = self._rows.get(key)
                running = self._computing.get(key)
                if cached is not None and progress.state == "running":
                    games, state, at, rows, took = cached
                    if games == progress.games_done and state == progress.state:
                        return rows
                    if running is not None or now - at < max(self.fresh_s, self.spacing * took):
                        return rows  # computed again by one reader, in a while
                    self._computing[key] = running_future()
                    try:
                        threading.Thread(
                            target=self._compute_aside, args=(store, tourney_id, replicates, progress), daemon=True
                        ).start()
                    except RuntimeError:  # no thread to be had: a claim left behind held every later reader
                        self._computing.pop(key).set_result(None)
                        log.exception("standings of tournament %s not computed aside", tourney_id)
                    return rows
                if running is None:
                    self._computing[key] = running_future()
                    break
            if not block:
                raise StandingsPending(running)
            running.result()  # another reader computes what this one needs: its result (or error), not a second one
        return self._compute(store, tourney_id, replicates, progress)

    def _compute_aside(self, store: TournamentStore, tourney_id: str, replicates: int, progress: Progress) -> None:
        try:
            self._compute(store, tourney_id, replicates, progress)
        except Exception:  # Redis away: the readers keep the standings they have, and a later read tries again
            log.exception("standings of tournament %s not computed", tourney_id)

    def _compute(self, store: TournamentStore, tourney_id: str, replicates: int, progress: Progress) -> list[Standing]:
        """Compute the standings of the key this thread claimed in ``_computing``, keep and return them."""
        key = (store.keys.prefix, tourney_id, replicates)
        failed: BaseException | None = None
        try:
            began = time.monotonic()
            rows = current_standings(store, tourney_id, replicates)
            took = time.monotonic() - began
            with self._lock:
                if progress.state in ENDED:
                    self._final[key] = rows
                    self._rows.pop(key, None)
                    return rows
                self._rows[key] = (progress.games_done, progress.state, began, rows, took)
                self._rows.move_to_end(key)
                while len(self._rows) > self.size:
                    self._rows.popitem(last=False)
            return rows
        except BaseException as error:
            failed = error
            raise
        finally:
            with self._lock:
                done = self._computing.pop(key)
                if failed is None:
                    done.set_result(None)
                else:  # every reader waiting for it fails with it, rather than each computing again in turn
                    done.set_exception(failed)


def running_future() -> Future[None]:
    """A computation's future, already running: a waiter that gives up (an RPC cancelled while it
    awaits it through ``asyncio.wrap_future``, which then cancels the future) cannot cancel it for the
    other readers."""
    future: Future[None] = Future()
    future.set_running_or_notify_cancel()
    return future


def current_standings(store: TournamentStore, tourney_id: str, replicates: int = DEFAULT_REPLICATES) -> list[Standing]:
    seed = store.get(tourney_id).bootstrap_seed
    return standings(duplicate_observations(store.game_results(tourney_id)), replicates, seed)


def create(store: TournamentStore, tourney: Tournament, dispatch: jobs.Dispatch) -> list[TablePlan]:
    """Store the tournament, draw its deals and send its first round's tables."""
    return jobs.start(store, tourney, dispatch)


def page_of_summaries(
    store: TournamentStore, offset: int, size: int
) -> tuple[list[tuple[TournamentSummary, Progress]], bool]:
    """Tournaments in the order of their ids, ``size`` from ``offset``, each with its progress (two
    round trips in all), and whether more follow."""
    ids = store.ids()
    return store.summaries(ids[offset : offset + size]), offset + size < len(ids)


def tables(store: TournamentStore, tourney: Tournament) -> list[TableView]:
    games_by_table: dict[str, list[str]] = {}
    for game in sorted(store.finished_games(tourney.tourney_id), key=play_order):
        games_by_table.setdefault(game.partition("/")[0], []).append(game)
    plans = store.tables(tourney.tourney_id)
    states = store.table_states(tourney.tourney_id, list(plans))
    views = []
    for table_id, plan in plans.items():
        state = states[table_id]
        waiting = json.loads(state.get("waiting", "{}"))
        if state.get("state") != "running" or waiting.get("until_ms", 0) < now_ms():
            waiting = {}  # a runner that died while it waited left its note behind
        views.append(
            TableView(
                table_id=table_id,
                round=plan.round,
                entrants=tuple(tourney.entrants[index].name for index in plan.entrants),
                state=state.get("state", "queued"),
                attempts=int(state.get("attempts", 0)),
                games_done=len(games_by_table.get(table_id, ())),
                games=len(plan.entrants) * tourney.deals,
                forfeits=tuple(json.loads(state.get("forfeits", "[]"))),
                waiting_for=tuple(waiting.get("names", ())),
                waiting_until_ms=int(waiting.get("until_ms", 0)),
                game_ids=tuple(games_by_table.get(table_id, ())),
            )
        )
    return views


def overview(
    store: TournamentStore,
    tourney_id: str,
    replicates: int = DEFAULT_REPLICATES,
    cache: StandingsCache | None = None,
    block: bool = True,
) -> Overview:
    """``block``: as ``StandingsCache.get``'s."""
    progress = store.progress(check_id(tourney_id))
    tourney = store.get(tourney_id)
    rows = (
        cache.get(store, tourney_id, replicates, progress, block)
        if cache
        else current_standings(store, tourney_id, replicates)
    )
    views = cache.tables(store, tourney, progress) if cache else tables(store, tourney)
    away = store.away_marks(tourney_id) if progress.state == "running" else []
    return Overview(tourney, progress, games_total(tourney, progress), views, rows, away)


def export(
    store: TournamentStore,
    tourney_id: str,
    fmt: str,
    replicates: int = DEFAULT_REPLICATES,
    cache: StandingsCache | None = None,
    addresses: bool = True,
    block: bool = True,
) -> tuple[Iterator[str], bool]:
    """(the pieces of the CSV or JSON text, whether the tournament had ended: finished or cancelled).
    JSON says its state (running, finished, cancelled) and holds the deals
    and the records only once it has: the store refuses them before; their stored text goes as it is,
    a batch at a time (thousands of records are never all held, nor parsed), but without
    ``addresses`` a record with an endpoint seat loses its address (``without_addresses``: for
    callers other than the host). The standings come from ``cache`` when given, as the overview's
    (``block``: as ``StandingsCache.get``'s)."""
    if fmt not in EXPORT_FORMATS:
        raise TournamentError(f"format: {fmt!r} must be csv or json")
    progress = store.progress(check_id(tourney_id))
    finished = progress.state in ENDED
    rows = (
        cache.get(store, tourney_id, replicates, progress, block)
        if cache
        else current_standings(store, tourney_id, replicates)
    )
    if fmt == "csv":
        return iter([to_csv(rows)]), finished
    head = f'{{\n"tournament": {json.dumps(tourney_id)},\n"state": {json.dumps(progress.state)},\n'
    head += f'"finished": {json.dumps(finished)},\n'
    head += f'"standings": {to_json(rows)}'
    if not finished:
        return iter([head, "\n}\n"]), finished
    records = store.record_texts(tourney_id)
    parts = (
        head,
        ',\n"deals": ',
        store.deal_texts(tourney_id),
        ',\n"records": ',
        records if addresses else ((game, without_addresses(raw)) for game, raw in records),
        "\n}\n",
    )
    return _json_pieces(parts), finished


def _json_pieces(parts: tuple[str | Iterator[tuple[str, str]], ...]) -> Iterator[str]:
    """The text of ``parts``: each string as it is, each (key, JSON text) iterator as an object."""
    for part in parts:
        if isinstance(part, str):
            yield part
            continue
        before = "{"
        for key, raw in part:
            yield f"{before}\n{json.dumps(key)}: {raw}"
            before = ","
        yield "{}" if before == "{" else "\n}"


def game_record(store: TournamentStore, tourney_id: str, game: str, addresses: bool = True) -> str:
    """One game's record (stored JSON text) once the tournament has ended, for its replay:
    TournamentRunning while it runs (other tables may still play the same deals), NOT_FOUND naming
    ``game_id`` when no such game was recorded. Without ``addresses`` an endpoint seat loses its
    address, as in the export."""
    check_id(tourney_id)
    check_game_id(game)
    raw = store.record_text(tourney_id, game)
    if raw is None:
        raise TournamentNotFound(f"game_id: no game {game!r} recorded in tournament {tourney_id!r}")
    return raw if addresses else without_addresses(raw)


def resume(store: TournamentStore, tourney_id: str, dispatch: jobs.Dispatch) -> list[str]:
    """Send every unfinished table again (see ``jobs.resume``)."""
    store.progress(check_id(tourney_id))
    return jobs.resume(store, tourney_id, dispatch)


def cancel(store: TournamentStore, tourney_id: str) -> tuple[TournamentSummary, Progress, int]:
    """Cancel a running tournament: (its summary, its progress now, the tables it stopped). Its recorded games
    stay, no game is recorded after it, no table starts again. TournamentEnded when it had finished
    or was cancelled already."""
    status, tables = store.cancel(check_id(tourney_id))
    if status == "missing":
        raise not_found(tourney_id)
    if status != "done":
        ended = "has finished" if status == "finished" else "was cancelled"
        raise TournamentEnded(f"tournament_id: the tournament {tourney_id!r} {ended} already: nothing to cancel")
    summary, progress = store.summaries([tourney_id])[0]
    return summary, progress, tables
