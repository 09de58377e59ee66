"""``ohell tournament create|list|status|standings|export|resume|cancel``: the host's tournament commands.

A gRPC client of the matchmaker's tournament RPCs, like the other host commands
(arena/local/admin_client.py: ``--matchmaker``, ``--host-token-file``). Creating, resuming and
cancelling need the host token; the rest are public reads.
"""

from __future__ import annotations

import argparse
import codecs
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rich.table import Table

from arena.local.admin_client import Host, add_common, with_host
from arena.local.output import text_console
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.files import files_written_whole
from arena.sdk.arguments import UINT32, whole
from arena.tournament.messages import away_text, entrant_from_text, no_standings_text, waiting_text
from arena.tournament.model import DEFAULT_GRACE_S, FORMATS, ID_RULE, TournamentError
from arena.tournament.standings import DEFAULT_REPLICATES, MAX_REPLICATES
from arena.wire import fixed, given_rules, interval_text, rules_to_proto
from ohell.errors import OhHellError

console = text_console()
FORMAT_NUMBERS = {"round-robin": tpb.TOURNAMENT_FORMAT_ROUND_ROBIN, "swiss": tpb.TOURNAMENT_FORMAT_SWISS}
STATE_NAMES = {
    tpb.TOURNAMENT_STATE_RUNNING: "running",
    tpb.TOURNAMENT_STATE_FINISHED: "finished",
    tpb.TOURNAMENT_STATE_CANCELLED: "cancelled",
}
STANDINGS_TITLES = {tpb.TOURNAMENT_STATE_FINISHED: "final", tpb.TOURNAMENT_STATE_CANCELLED: "final (cancelled)"}
TABLE_PAGE = 500  # tables per GetTournament call: status lists them all
# What `export --out` writes at most, and the room it leaves on the file's disk: a matchmaker that
# sent pieces without end (for the 600 s of the stream) filled the disk. The largest export the
# matchmaker makes (10,000 deal sets of game records, their decks) is a few GB.
MAX_EXPORT_BYTES = 32 << 30
MIN_FREE_BYTES = 256 << 20


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def entrant_message(text: str) -> tpb.TournamentEntrant:
    try:
        return entrant_from_text(text)
    except TournamentError as error:
        raise OhHellError(f"--entrant: {error}") from None


def cmd_create(host: Host, args: argparse.Namespace) -> int:
    rules = rules_to_proto(given_rules(args.rules, args.option))
    rules.preset = args.rules
    tourney = tpb.Tournament(
        tournament_id=args.id,
        entrants=[entrant_message(text) for text in args.entrant],
        rules=rules,
        seats=args.seats,
        format=FORMAT_NUMBERS[args.format],
        rounds=args.rounds,
        deals=args.deals,
        grace_seconds=args.grace_s,
    )
    progress = host.call("CreateTournament", tournament=tourney).progress
    console.print(
        f"tournament {args.id}: {plural(progress.tables, 'table')} in round 1, {progress.games_total} games in all, "
        "sent to the workers"
    )
    return 0


def progress_line(tournament_id: str, progress: Any) -> str:
    return (
        f"{tournament_id}: {STATE_NAMES.get(progress.state, '?')}, round {progress.round} of {progress.rounds}, "
        f"{progress.tables_done}/{progress.tables} tables, {progress.games_done}/{progress.games_total} games played"
    )


def cmd_list(host: Host, args: argparse.Namespace) -> int:
    """One tab-separated line a tournament (for scripts); none at all is said on standard error."""
    listed = 0
    for summary in host.pages("ListTournaments", "tournaments"):
        p = summary.progress
        state = STATE_NAMES.get(p.state, "?")
        print(f"{summary.tournament.tournament_id}\t{state}\tround {p.round}\t{p.tables_done}/{p.tables} tables")
        listed += 1
    if not listed:
        text_console(stderr=True).print("no tournaments yet (create one: ohell tournament create --help)")
    return 0


def cmd_status(host: Host, args: argparse.Namespace) -> int:
    def tables(token: str) -> Any:  # a page of them; the shared standings: nothing computed for this
        return host.call("GetTournament", tournament_id=args.id, table_page_size=TABLE_PAGE, table_page_token=token)

    reply = tables("")
    console.print(progress_line(args.id, reply.progress))
    table = Table()
    for column in ("table", "round", "entrants", "state", "attempts", "games", "forfeits"):
        table.add_column(column)
    waits = []
    while True:
        for t in reply.tables:
            games = f"{t.games_done}/{t.games}"
            table.add_row(
                t.table_id, str(t.round), ", ".join(t.entrants), t.state, str(t.attempts), games, ", ".join(t.forfeits)
            )
            if t.waiting_for:
                waits.append(f"table {t.table_id} {waiting_text(t)}")
        if not reply.next_table_page_token:
            break
        reply = tables(reply.next_table_page_token)
    console.print(table)
    for line in [*waits, *map(away_text, reply.away)]:  # under the table: a row's cell would wrap it
        console.print(line)
    return 0


def cmd_standings(host: Host, args: argparse.Namespace) -> int:
    reply = host.call("GetTournament", tournament_id=args.id, replicates=args.replicates)
    title = f"{args.id}: {STANDINGS_TITLES.get(reply.progress.state, 'provisional')} standings"
    if not reply.standings:  # a table of headers alone said nothing of why
        console.print(f"{title}: {no_standings_text(reply.progress.games_done)}")
        return 0
    table = Table(title=title)
    for column in ("#", "entrant", "games", "mean dup", "95% CI", "P(> next)", "deals won", "forfeits"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    for row in reply.standings:
        p_next = f"{row.p_above_next:.3f}" if row.HasField("p_above_next") else ""
        interval = interval_text(row)
        cells = (
            row.rank,
            row.entrant,
            row.games,
            fixed(row.mean_duplicate, 2, sign=True),
            interval,
            p_next,
            row.deals_won,
        )
        table.add_row(*map(str, cells), str(row.forfeits))
    console.print(table)
    return 0


def cmd_export(host: Host, args: argparse.Namespace) -> int:
    fmt = tpb.EXPORT_FORMAT_JSON if args.format == "json" else tpb.EXPORT_FORMAT_CSV
    pieces = host.stream("ExportTournament", tournament_id=args.id, format=fmt, replicates=args.replicates)
    if args.out and args.out != "-":
        out = Path(args.out)
        try:  # piece by piece, under a hidden name put in place once whole: a cut stream leaves --out as it was
            with files_written_whole(out.parent, [out.name]) as files:
                for text in decoded(bounded(pieces, out.parent)):
                    files[out.name].write(text)
        except OSError as error:
            raise OhHellError(f"cannot write --out {args.out}: {error.strerror or error}") from None
        console.print(f"written to {args.out}")
        return 0
    ends_with_newline = True
    for text in decoded(pieces):
        shown = "".join(c if c.isprintable() or c in "\n\t" else "?" for c in text)  # no terminal escapes
        print(shown, end="", flush=True)
        ends_with_newline = shown.endswith("\n")
    if not ends_with_newline:
        print()
    return 0


def bounded(pieces: Iterable[Any], folder: Path) -> Iterator[Any]:
    """The pieces, until they come to more than MAX_EXPORT_BYTES or would leave ``folder``'s disk
    with less than MIN_FREE_BYTES free: then OhHellError (and what was written goes)."""
    received = 0
    for piece in pieces:
        received += len(piece.data)
        if received > MAX_EXPORT_BYTES:
            raise OhHellError(f"the export came to more than {MAX_EXPORT_BYTES >> 30} GiB: stopped, nothing written")
        if shutil.disk_usage(folder).free - len(piece.data) < MIN_FREE_BYTES:
            raise OhHellError(
                f"the export would leave under {MIN_FREE_BYTES >> 20} MiB free on the disk of --out: stopped,"
                " nothing written"
            )
        yield piece


def decoded(pieces: Iterable[Any]) -> Iterable[str]:
    """The text of the matchmaker's pieces as they come (a character may be split between two), bytes
    that are not UTF-8 replaced."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for piece in pieces:
        if text := decoder.decode(piece.data):
            yield text
    if text := decoder.decode(b"", final=True):
        yield text


def cmd_resume(host: Host, args: argparse.Namespace) -> int:
    tables = list(host.call("ResumeTournament", tournament_id=args.id).tables)
    if not tables:
        console.print(f"{args.id}: no unfinished table to send again (`ohell tournament status {args.id}`)")
    else:
        console.print(f"{args.id}: sent {plural(len(tables), 'unfinished table')} again: {', '.join(tables)}")
    return 0


def cmd_cancel(host: Host, args: argparse.Namespace) -> int:
    reply = host.call("CancelTournament", tournament_id=args.id)
    p = reply.progress
    console.print(
        f"{args.id}: cancelled; {plural(reply.tables_cancelled, 'unfinished table')} stopped, "
        f"{p.games_done}/{p.games_total} games recorded stay; the standings are final "
        f"(`ohell tournament standings {args.id}`)"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tournament = sub.add_parser("tournament", help="duplicate-deal tournaments on the stack's workers")
    commands = tournament.add_subparsers(dest="tournament_command", required=True)

    def command(name: str, help_text: str, handler: Any, with_id: bool = True) -> argparse.ArgumentParser:
        public = name not in ("create", "resume", "cancel")
        # a help line is a %-format (95%% is 95 %), a description is printed as it is written
        description = help_text.replace("%%", "%")
        parser = add_common(commands.add_parser(name, help=help_text, description=description), public)
        if with_id:
            parser.add_argument("id", help=f"tournament id: {ID_RULE}" if name == "create" else "tournament id")
        parser.set_defaults(handler=with_host(handler))
        return parser

    create = command("create", "create a tournament and send its tables to the workers (host)", cmd_create)
    entrant_help = (
        "builtin:BOT, connected:AGENT_ID or endpoint:HOST:PORT, each with an optional =NAME "
        "(without one a connected agent is named as registered); repeat per entrant"
    )
    create.add_argument("--entrant", action="append", required=True, metavar="KIND:WHAT[=NAME]", help=entrant_help)
    # from 1: the request's 0 stands for the default (3 seats, 2 deal sets, 1 round), so a 0 typed
    # here was played as that default; the matchmaker names each field's range
    create.add_argument("--seats", type=whole(UINT32, 1), default=3, help="seats per table (3-7; default %(default)s)")
    create.add_argument("--format", choices=FORMATS, default="round-robin", help="default %(default)s")
    create.add_argument("--rounds", type=whole(UINT32, 1), default=1, help="Swiss rounds (default %(default)s)")
    create.add_argument(
        "--deals",
        type=whole(UINT32, 1),
        default=2,
        help="deal sets per table, each played in every rotation (default %(default)s)",
    )
    create.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules'; default %(default)s)")
    create.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="override a rule")
    create.add_argument(
        "--grace-s",
        type=float,
        default=DEFAULT_GRACE_S,
        help="seconds to wait for an offline connected entrant (default %(default)g)",
    )
    command("list", "list the tournaments", cmd_list, with_id=False)
    command("status", "progress and tables", cmd_status)
    for name, handler, help_text in (
        ("standings", cmd_standings, "standings with 95%% intervals (provisional while running)"),
        ("export", cmd_export, "standings as CSV or JSON (JSON adds deals and records once finished)"),
    ):
        parser = command(name, help_text, handler)
        parser.add_argument(
            "--replicates",
            type=whole(UINT32),
            default=DEFAULT_REPLICATES,
            help=f"bootstrap resamples (1-{MAX_REPLICATES}; default {DEFAULT_REPLICATES}, any other: the host only)",
        )
        if name == "export":
            parser.add_argument("--format", choices=("csv", "json"), default="csv")
            parser.add_argument("--out", help="file to write (default, or -: standard output)")
    command("resume", "send every unfinished table to the workers again, after a worker was lost (host)", cmd_resume)
    command("cancel", "stop a running tournament for good: no further game; games recorded stay (host)", cmd_cancel)
