"""What the tournament's Celery task does, as plain functions over the store (the task is a thin shell).

A table is claimed with a lease its runner renews; a runner that dies lets the lease lapse and the
redelivered task (or ``ohell tournament resume``) plays the games not yet recorded. Each game is
recorded once, each table finished once; whoever finishes the last table of a round opens the next
Swiss round (once) or ends the tournament.

A connected entrant that is not online (no gateway presence) when its table starts is waited for
up to the tournament's ``grace_s``; if it is still away, it forfeits the table: its seats are played
by the built-in ``random`` bot under its name (so the others' games and comparisons stand), it is
charged those results, and each of those games counts as a forfeit in the standings. It is then
marked away in the tournament (with that decision, in Redis): its later tables forfeit it at once,
without waiting, while it is still not online; a table that starts with it online seats it and
clears the mark.

A cancelled tournament (``TournamentStore.cancel``) starts no table; a runner waiting at a table's
start or in play stops (within a poll of the wait, or before its next game) and releases its lease;
the sweep, ``advance`` and ``resume`` leave it alone.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from arena.clock import now_ms
from arena.play.relay import platform_faults
from arena.play.specs import SeatSpec
from arena.redispatch import FIELDS, Sent, due
from arena.settings import lease_seconds
from arena.tournament.away import AwayMark, AwaySighting
from arena.tournament.deals import DealSet, draw_deal_set
from arena.tournament.model import TablePlan, Tournament, TournamentEnded, TournamentError
from arena.tournament.play import game_id, play_table_games, table_games
from arena.tournament.schedule import swiss_round
from arena.tournament.standings import duplicate_observations, standings
from arena.tournament.store import TournamentStore
from ohell.state import Game

log = logging.getLogger(__name__)

STAND_IN = "random"
PRESENCE_POLL_S = 0.5
FINISH_TRIES = 3  # plays of a table's missing games in one run before its task is retried

Dispatch = Callable[[str, str, Sequence[SeatSpec]], None]  # (tournament, table, its seats): send the task


class PlatformFailed(TournamentError):
    """A game the platform spoiled (its match host could not reach a connected agent: Redis failed, or
    the gateway holding the agent died or shut down).
    It is not recorded, so that the table's next attempt plays it again (with the same cards and
    seeds, unless its agents saw a first rotation: ``unseen_deals``), rather than charging the agent
    the faults and forfeit (the ladder voids such a match)."""


class LeaseLost(TournamentError):
    """The runner no longer holds its table's lease (another runner took the table over)."""


class Cancelled(TournamentError):
    """The tournament was cancelled while the runner played its table (the lease is released)."""


def runner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@contextmanager
def renewing(store: TournamentStore, tourney_id: str, table: str, runner: str, lease_s: float) -> Iterator[None]:
    """Renew the table's lease every third of it while the block runs (a table lasts many games)."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease_s / 3):
            try:
                store.renew_table(tourney_id, table, runner, lease_s)
            except Exception:  # Redis briefly away: the lease may lapse; recording stays idempotent
                continue

    thread = threading.Thread(target=renew, daemon=True, name=f"lease-{table}")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@dataclass(frozen=True)
class Absence:
    """Who is absent at a table's start (``absent_entrants``)."""

    names: list[str]  # entrants that forfeit the table: revoked, or connected and not online
    # of those, the connected ones not revoked that the wait ended waiting for (not marked away at its
    # last look): to be marked away in the tournament
    away: list[AwaySighting]
    online: list[str]  # agent ids of the connected entrants online (their away marks cleared)


def absent_entrants(
    store: TournamentStore,
    entrants: Sequence[SeatSpec],
    grace_s: float,
    waiting: Callable[[list[str], int], None] | None = None,
    *,
    tourney_id: str | None = None,
    table: str = "",
    check: Callable[[], None] | None = None,
) -> Absence:
    """The entrants whose token was revoked (not waited for) and the connected entrants still not
    online after waiting up to ``grace_s``. An entrant marked away in tournament ``tourney_id`` (it
    forfeited an earlier table after its wait, and no table has seen it online since) is not waited
    for: absent at once unless online, and so is one that another table marks away meanwhile; only
    those it waited for are in ``Absence.away`` (a table marks away only an entrant it waited for).
    ``waiting(names, until_ms)`` is told whom it waits for (and until when, ms since the epoch) each
    time that changes; ``check()``, before each look, may raise to end the wait (the tournament was
    cancelled)."""
    revoked = store.revoked_agents([e.agent_id for e in entrants if e.agent_id])
    connected = [e for e in entrants if e.kind == "connected" and e.agent_id not in revoked]
    deadline = time.monotonic() + grace_s
    until_ms = int((time.time() + grace_s) * 1000)
    seen_away: dict[str, int] = {}  # agent id -> when this wait first saw it away (ms)
    told: list[str] = []
    while True:
        if check is not None:
            check()
        look = store.whereabouts(tourney_id, [e.agent_id for e in connected])
        away = [e for e in connected if e.agent_id not in look.online]
        for entrant in away:
            seen_away.setdefault(entrant.agent_id, now_ms())
        waited = [e for e in away if e.agent_id not in look.marks]
        if not waited or time.monotonic() >= deadline:
            return Absence(
                names=[e.name for e in entrants if e.agent_id in revoked or e in away],
                away=[
                    AwaySighting(AwayMark(e.agent_id, e.name, seen_away[e.agent_id], table), look.clears[e.agent_id])
                    for e in waited
                ],
                online=sorted(look.online),
            )
        names = [e.name for e in waited]
        if waiting is not None and names != told:
            waiting(names, until_ms)
            told = names
        time.sleep(PRESENCE_POLL_S)


def table_seats(tourney: Tournament, plan: TablePlan) -> list[SeatSpec]:
    return [tourney.entrants[index] for index in plan.entrants]


def run_table(
    store: TournamentStore, tourney_id: str, table: str, dispatch: Dispatch, lease_s: float | None = None
) -> str:
    """Play the table unless finished, cancelled or held by a live runner: 'finished', 'duplicate',
    'busy', 'missing', 'cancelled'."""
    lease = lease_s or lease_seconds()
    runner = runner_id()
    status = store.start_table(tourney_id, table, runner, lease)
    if status != "run":
        if status == "finished":  # a redelivered task: make sure what follows the table happened
            advance(store, tourney_id, dispatch)
        return status
    tourney = store.get(tourney_id)
    entrants = [store.registered_seat(e) for e in table_seats(tourney, store.tables(tourney_id)[table])]
    games = table_games(table, tourney.deals, len(entrants))
    for _ in range(FINISH_TRIES):
        try:
            _play_table(store, tourney, tourney_id, table, entrants, runner, lease)
        except LeaseLost:  # stalled past its lease: the table is another runner's now
            return "busy"
        except Cancelled:
            return "cancelled"
        status = store.finish_table(tourney_id, table, games)[0]
        if status == "cancelled":
            return status
        if status != "incomplete":  # else results lost with Redis: play the missing games again
            break
    else:
        raise TournamentError(f"table {table!r} of {tourney_id!r}: games still unrecorded after {FINISH_TRIES} tries")
    advance(store, tourney_id, dispatch)
    return "finished" if status == "first" else "duplicate"


def _play_table(
    store: TournamentStore,
    tourney: Tournament,
    tourney_id: str,
    table: str,
    entrants: list[SeatSpec],
    runner: str,
    lease: float,
) -> None:
    """Play the table's games not recorded yet, holding its lease (``run_table``)."""
    with renewing(store, tourney_id, table, runner, lease):

        def holding() -> None:
            """That the tournament was not cancelled and that this runner still holds the lease (one
            stalled past it, whose table was sent again, would host the same games as the new runner,
            with the same match ids, for the same agents); raises otherwise."""
            status = store.next_game(tourney_id, table, runner, lease)
            if status == "cancelled":
                raise Cancelled(f"table {table!r} of {tourney_id!r}: the tournament was cancelled")
            if status != "run":
                raise LeaseLost(f"table {table!r} of {tourney_id!r}: runner {runner} lost its lease")

        decided = store.table_state(tourney_id, table).get("forfeits")  # a resumed table keeps its decision
        if decided is None:

            def waiting(names: list[str], until_ms: int) -> None:
                store.set_waiting(tourney_id, table, names, until_ms)

            absence = absent_entrants(
                store, entrants, tourney.grace_s, waiting, tourney_id=tourney_id, table=table, check=holding
            )
            forfeits = store.decide_forfeits(tourney_id, table, absence.names, absence.away, absence.online)
        else:
            forfeits = json.loads(decided)
        stood_in = set(forfeits)  # entrants whose seats the stand-in plays, under their names
        watched = [entrant.agent_id for entrant in entrants if entrant.agent_id and entrant.name not in stood_in]

        def lineup() -> list[SeatSpec]:
            """Before each game: an entrant whose token was revoked since the table started is seated
            no further; the stand-in plays its remaining games, which it forfeits."""
            revoked = store.revoked_agents(watched) if watched else set()
            stood_in.update(entrant.name for entrant in entrants if entrant.agent_id in revoked)
            return [
                SeatSpec.builtin(STAND_IN, entrant.name) if entrant.name in stood_in else entrant
                for entrant in entrants
            ]

        finished = store.finished_games(tourney_id)
        deal_sets, redealt = unseen_deals(store, tourney, tourney_id, table, len(entrants), finished)

        def done(game: str) -> bool:
            """Whether ``game`` is recorded; before one is played, ``holding()``."""
            if game in finished:
                return True
            holding()
            return False

        def record(game: str, rec: dict[str, Any]) -> None:
            if platform_faults(rec):
                raise PlatformFailed(
                    f"game {game!r} of {tourney_id!r}: the platform failed (Redis or a gateway); it is played again"
                )
            names = [seat["name"] for seat in rec["seats"]]
            lost = sorted({*stood_in, *(names[seat] for seat in rec.get("forfeited", ()))} & set(names))
            unit = game.rpartition("/")[0]  # "<table>/d<k>": one deal set of the table
            result = {"table": table, "unit": unit, "seats": names, "scores": rec["totals"], "forfeited": lost}
            store.record_game(tourney_id, game, result, rec, redealt)

        play_table_games(
            table,
            tourney.rules(),
            entrants,
            deal_sets,
            done,
            record,
            tourney_id,
            lineup,
            lambda deal: store.mark_shown(tourney_id, table, deal),
        )


def unseen_deals(
    store: TournamentStore, tourney: Tournament, tourney_id: str, table: str, seats: int, finished: set[str]
) -> tuple[list[DealSet], int]:
    """The table's deal sets, each one whose first rotation was shown to an agent in a game never
    recorded (spoiled by the platform, or its runner died) drawn afresh first: replayed as it was,
    the agent would know the cards the other seats played in it. None of its games is recorded, so
    every rotation plays the new deal; the store keeps one draw however many runners try. With the
    table's redeal count: a runner's records are refused once the deals it read were redrawn."""
    dealt = store.dealt(tourney_id, table)
    for deal in store.shown_deals(tourney_id, table):
        games = [game_id(table, deal, turn) for turn in range(seats)]
        if not finished.intersection(games):
            dealt = store.redeal(tourney_id, table, deal, games, draw_deal_set(Game(tourney.rules(), seats)))
            log.info(
                "tournament %s table %s: deal set %d redealt (its first rotation was shown)", tourney_id, table, deal
            )
    return dealt


def advance(store: TournamentStore, tourney_id: str, dispatch: Dispatch) -> None:
    """When every table so far is done: open the next Swiss round and send its tables, or end."""
    progress = store.progress(tourney_id)
    if progress.state != "running" or progress.tables_done < progress.tables:
        return
    tourney = store.get(tourney_id)
    if progress.round >= tourney.rounds:
        store.end(tourney_id, progress.round)
        return
    ranked = standings(duplicate_observations(store.game_results(tourney_id)), replicates=1)
    index = {entrant.name: number for number, entrant in enumerate(tourney.entrants)}
    order = [index[row.entrant] for row in ranked]
    order += [number for number in range(len(tourney.entrants)) if number not in order]
    for plan in store.open_round(tourney_id, progress.round, swiss_round(order, tourney.seats)):
        send(store, tourney, plan, dispatch)


def send(
    store: TournamentStore,
    tourney: Tournament,
    plan: TablePlan,
    dispatch: Dispatch,
    attempts: int = 0,
    unstarted: int = 0,
) -> None:
    """``unstarted``: how many copies of the table were sent before this one without any starting it."""
    store.mark_dispatched(tourney.tourney_id, plan.table_id, attempts, unstarted)
    dispatch(tourney.tourney_id, plan.table_id, table_seats(tourney, plan))


def start(store: TournamentStore, tourney: Tournament, dispatch: Dispatch) -> list[TablePlan]:
    """Create the tournament and send its first round's tables to the workers."""
    plans = store.create(tourney)
    for plan in plans:
        send(store, tourney, plan, dispatch)
    return plans


def resume(store: TournamentStore, tourney_id: str, dispatch: Dispatch) -> list[str]:
    """Send every unfinished table again (after a whole worker was lost); running ones stay with
    their live runner (the lease), finished games are not played again. A cancelled tournament
    refuses (TournamentEnded)."""
    if store.progress(tourney_id).state == "cancelled":
        raise TournamentEnded(f"tournament_id: the tournament {tourney_id!r} was cancelled: its tables stay unplayed")
    tourney = store.get(tourney_id)
    plans = store.tables(tourney_id)
    unfinished = store.unfinished_tables(tourney_id)
    for table in unfinished:
        send(store, tourney, plans[table], dispatch)
    if not unfinished:
        advance(store, tourney_id, dispatch)
    return unfinished


def sweep(store: TournamentStore, dispatch: Dispatch, redispatch_after_s: float = 30.0) -> int:
    """The matchmaker's recovery sweep for tournaments: send again every running table whose
    runner is gone (its lease lapsed), once per runner that started it (again only after
    ``redispatch_after_s``: the copy sent may wait behind other tasks, and every copy of a table
    retries while the table is played), and, when no table of the tournament is being played,
    every queued table that waited ``redispatch_after_s`` (its task was lost with a worker; while
    tables are being played, queued ones are just waiting their turn); each copy no worker started
    doubles the next wait (``arena.redispatch``). Open the next round or end a
    tournament whose finisher died before doing it. Returns the tables sent again."""
    sent = 0
    now = now_ms()
    for tourney_id in store.running_ids():
        tourney = store.get(tourney_id)
        plans = store.tables(tourney_id)
        unfinished = store.unfinished_states(tourney_id, list(plans))
        alive = store.leases_alive(tourney_id, list(unfinished))
        for table, state in unfinished.items():
            attempts = int(state.get("attempts", 0))
            running = state.get("state") == "running"
            copy = due(Sent.parse(map(state.get, FIELDS)), attempts, running, now, redispatch_after_s)
            if table not in alive and (copy.died or (copy.waited and (running or not alive))):
                send(store, tourney, plans[table], dispatch, attempts, copy.unstarted)
                sent += 1
        if not unfinished:
            advance(store, tourney_id, dispatch)
    return sent


def sweep_forever(
    store: TournamentStore,
    dispatch: Dispatch,
    stop: Callable[[], bool],
    every_s: float = 2.0,
    redispatch_after_s: float = 30.0,
) -> None:
    """``sweep`` every ``every_s`` until ``stop()`` (the matchmaker runs it in a thread)."""
    while not stop():
        try:
            sweep(store, dispatch, redispatch_after_s)
        except Exception:  # Redis restarting: try again next time
            log.exception("tournament sweep failed")
        time.sleep(every_s)
