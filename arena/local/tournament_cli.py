"""``ohell tournament create|list|status|standings|export|resume``: the host's tournament commands.

They talk to the stack's Redis (``--redis-url`` or ``REDIS_URL``; ``--prefix``) through
``arena.tournament.store`` and send tables to the stack's Celery workers. Access to that Redis is
the host's credential here (as for ``ohell ladder rebuild``).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from arena.keys import DEFAULT_PREFIX, Keys
from arena.play.specs import SeatSpec, SeatSpecError
from arena.tournament import jobs
from arena.tournament.model import DEFAULT_GRACE_S, FORMATS, Tournament, TournamentError
from arena.tournament.standings import DEFAULT_REPLICATES, Standing, duplicate_observations, standings, to_csv, to_json
from arena.tournament.store import TournamentStore
from ohell.errors import OhHellError
from ohell.rules import parse_option

console = Console()


def parse_entrant(text: str) -> SeatSpec:
    """``builtin:BOT``, ``connected:AGENT_ID`` or ``endpoint:HOST:PORT``, each with an optional ``=NAME``."""
    spec, _, name = text.partition("=")
    kind, _, value = spec.partition(":")
    try:
        if kind == "builtin":
            return SeatSpec.builtin(value, name or None)
        if kind == "connected":
            return SeatSpec.connected(value, name or None)
        if kind == "endpoint":
            return SeatSpec.endpoint(value, name or None)
    except SeatSpecError as error:
        raise OhHellError(f"--entrant {text!r}: {error}") from None
    raise OhHellError(f"--entrant {text!r}: expected builtin:BOT, connected:AGENT_ID or endpoint:HOST:PORT")


def _store(args: argparse.Namespace) -> TournamentStore:
    url = args.redis_url or os.environ.get("REDIS_URL")
    if not url:
        raise OhHellError("give --redis-url or set REDIS_URL")
    return TournamentStore.connect(url, Keys(args.prefix))


def _dispatch(args: argparse.Namespace) -> jobs.Dispatch:
    from arena.ladder.routing import make_celery, tourney_dispatcher

    url = args.redis_url or os.environ["REDIS_URL"]
    return tourney_dispatcher(make_celery(url, prefix=args.prefix), args.prefix)


def cmd_create(args: argparse.Namespace) -> int:
    entrants = tuple(parse_entrant(text) for text in args.entrant)
    try:
        overrides = dict(parse_option(option) for option in args.option)
        tourney = Tournament(
            args.id,
            entrants,
            seats=args.seats,
            format=args.format,
            rounds=args.rounds,
            deals=args.deals,
            preset=args.rules,
            overrides=overrides,
            grace_s=args.grace_s,
        )
        store = _store(args)
        plans = jobs.start(store, tourney, _dispatch(args))
    except TournamentError as error:
        raise OhHellError(str(error)) from None
    games = sum(tourney.deals * len(plan.entrants) for plan in plans)
    console.print(
        f"tournament {tourney.tourney_id}: {len(plans)} tables in round 1, {games} games, sent to the workers"
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    store = _store(args)
    for tourney_id in store.ids():
        progress = store.progress(tourney_id)
        print(
            f"{tourney_id}\t{progress.state}\tround {progress.round}\t{progress.tables_done}/{progress.tables} tables"
        )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        progress = store.progress(args.id)
        tourney = store.get(args.id)
    except TournamentError as error:
        raise OhHellError(str(error)) from None
    console.print(
        f"{args.id}: {progress.state}, round {progress.round} of {tourney.rounds}, "
        f"{progress.tables_done}/{progress.tables} tables, {progress.games_done} games played"
    )
    table = Table()
    for column in ("table", "round", "entrants", "state", "attempts"):
        table.add_column(column)
    for table_id, plan in store.tables(args.id).items():
        state = store.table_state(args.id, table_id)
        names = ", ".join(tourney.entrants[index].name for index in plan.entrants)
        table.add_row(table_id, str(plan.round), names, state.get("state", "?"), state.get("attempts", "0"))
    console.print(table)
    return 0


def current_standings(store: TournamentStore, tourney_id: str, replicates: int) -> list[Standing]:
    if not 1 <= replicates <= 100_000:
        raise TournamentError(f"--replicates={replicates} must be from 1 to 100000")
    seed = store.get(tourney_id).bootstrap_seed
    return standings(duplicate_observations(store.game_results(tourney_id)), replicates, seed)


def cmd_standings(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        progress = store.progress(args.id)
        rows = current_standings(store, args.id, args.replicates)
    except TournamentError as error:
        raise OhHellError(str(error)) from None
    title = f"{args.id}: {'final' if progress.state == 'finished' else 'provisional'} standings"
    table = Table(title=title)
    for column in ("#", "entrant", "games", "mean dup", "95% CI", "P(> next)", "deals won", "forfeits"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    for row in rows:
        p_next = "" if row.p_above_next is None else f"{row.p_above_next:.3f}"
        interval = f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}]"
        cells = (row.rank, row.entrant, row.games, f"{row.mean_duplicate:+.2f}", interval, p_next, row.deals_won)
        table.add_row(*map(str, cells), str(row.forfeits))
    console.print(table)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        rows = current_standings(store, args.id, args.replicates)
        finished = store.progress(args.id).state == "finished"
        if args.format == "csv":
            text = to_csv(rows)
        else:
            document: dict[str, Any] = {
                "tournament": args.id,
                "finished": finished,
                "standings": json.loads(to_json(rows)),
            }
            if finished:  # the deals and records are published only once the tournament has ended
                document["deals"] = store.deals(args.id)
                document["records"] = store.records(args.id)
            text = json.dumps(document, indent=2)
    except TournamentError as error:
        raise OhHellError(str(error)) from None
    if args.out:
        Path(args.out).write_text(text)
        console.print(f"written to {args.out}")
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        tables = jobs.resume(store, args.id, _dispatch(args))
    except TournamentError as error:
        raise OhHellError(str(error)) from None
    console.print(f"{args.id}: sent {len(tables)} unfinished table(s) again: {', '.join(tables) or '-'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tournament = sub.add_parser("tournament", help="duplicate-deal tournaments on the stack's workers")
    commands = tournament.add_subparsers(dest="tournament_command", required=True)

    def command(name: str, help_text: str, handler: Any, with_id: bool = True) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        if with_id:
            parser.add_argument("id", help="tournament id")
        parser.add_argument("--redis-url", help="the stack's Redis (default: $REDIS_URL)")
        parser.add_argument("--prefix", default=os.environ.get("OHELL_REDIS_PREFIX") or DEFAULT_PREFIX)
        parser.set_defaults(handler=handler)
        return parser

    create = command("create", "create a tournament and send its tables to the workers", cmd_create)
    create.add_argument("--entrant", action="append", required=True, metavar="KIND:WHAT[=NAME]",
                        help="builtin:BOT, connected:AGENT_ID or endpoint:HOST:PORT; repeat per entrant")  # fmt: skip
    create.add_argument("--seats", type=int, default=3, help="seats per table (3-7)")
    create.add_argument("--format", choices=FORMATS, default="round-robin")
    create.add_argument("--rounds", type=int, default=1, help="Swiss rounds")
    create.add_argument("--deals", type=int, default=2, help="deal sets per table, each played in every rotation")
    create.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules')")
    create.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="override a rule")
    create.add_argument("--grace-s", type=float, default=DEFAULT_GRACE_S, help="wait for an offline connected entrant")
    command("list", "list the tournaments", cmd_list, with_id=False)
    command("status", "progress and tables", cmd_status)
    for name, handler, help_text in (
        ("standings", cmd_standings, "standings with 95%% intervals (provisional while running)"),
        ("export", cmd_export, "standings as CSV or JSON (JSON adds deals and records once finished)"),
    ):
        parser = command(name, help_text, handler)
        parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES, help="bootstrap resamples")
        if name == "export":
            parser.add_argument("--format", choices=("csv", "json"), default="csv")
            parser.add_argument("--out", help="file to write (default: standard output)")
    command("resume", "send every unfinished table to the workers again (after a worker was lost)", cmd_resume)
