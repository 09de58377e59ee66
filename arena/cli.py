"""The ``ohell`` command."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.local import bot_cli, tournament_cli
from arena.local import cli as ladder_cli
from arena.local.config import up_place
from arena.local.output import fixed, labelled, options_text, out_folder, text_console
from arena.sdk import cli as engine_cli
from ohell.errors import OhHellError
from ohell.presets import PRESETS
from ohell.referee import referee_text
from ohell.tally import SeriesTally

console = text_console()
errors = text_console(stderr=True)  # "error: ..." lines: not mixed into output a script reads


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def print_tally(tally: SeriesTally, title: str) -> None:
    table = Table(title=title)
    for column in ("bot", "games", "mean score", "exact bids", "wins", "win %"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for bot in sorted(tally.bots.values(), key=lambda b: -b.mean_score):
        table.add_row(
            bot.name,
            str(bot.games),
            fixed(bot.mean_score, 1),
            f"{100 * bot.exact_rate:.1f}%",
            f"{bot.wins:g}",
            f"{100 * bot.win_rate:.1f}%",
        )
    console.print(table)


def cmd_play(args: argparse.Namespace) -> int:
    from arena.local.play import play_series, series_setup

    names = [name.strip() for name in args.bots.split(",") if name.strip()]
    if args.games < 1:
        raise OhHellError(f"--games must be at least 1, got {args.games}")
    # one line on stderr before the progress bar, which would be left on stdout above it
    rules, makers = series_setup(args.rules, args.option, names)
    out = out_folder(args.out) if args.out else None
    with progress_bar() as progress:
        task = progress.add_task(f"{args.rules}: {len(names)} seats", total=args.games)
        try:
            tally = play_series(
                rules,
                names,
                args.games,
                args.seed,
                out,
                on_game=lambda done: progress.update(task, completed=done),
                makers=makers,
            )
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""  # the record's file, which the folder holds
            raise OhHellError(f"cannot write records to --out {args.out}: {where}{error.strerror or error}") from None
    print_tally(tally, f"{args.games} games of {args.rules}, seed {args.seed}")
    if args.out:
        console.print(f"records written to {Path(args.out)}/")  # one slash after a folder given as records/
    return 0


def cmd_referee(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise OhHellError(f"cannot read {path}: {error}") from None
    verdict = referee_text(text)
    print(verdict.summary())
    if verdict.valid:
        return 0
    return 2 if verdict.malformed else 1


def cmd_rules(args: argparse.Namespace) -> int:
    table = Table(title="rule presets (ohell play --rules NAME; override with --option name=value)")
    table.add_column("preset")
    table.add_column("options")
    for name in sorted(PRESETS):
        options = PRESETS[name].to_dict()
        table.add_row(name, options_text(options))
    console.print(table)
    return 0


def add_play_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    play = sub.add_parser("play", help="play games between bots in this process (built-in bots and bot files)")
    play.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules')")
    play.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="override a rule")
    play.add_argument(
        "--bots",
        default="heuristic,random,random,random",
        help="comma-separated, 3-7: built-in bot names or bot files (path/to/mybot.py:MyBot)",
    )
    play.add_argument("--games", type=int, default=100, help="games to play (default: 100; seats rotate every game)")
    play.add_argument("--seed", type=int, default=1, help="game n (from 0) is dealt with seed SEED + n (default: 1)")
    play.add_argument("--out", help="write one JSON match record per game into this folder")
    play.set_defaults(handler=cmd_play)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ohell", description="Oh Hell bot arena")
    sub = parser.add_subparsers(dest="command", required=True)

    add_play_parser(sub)

    ref = sub.add_parser("referee", help="replay a match record and verify every action")
    ref.add_argument("file")
    ref.set_defaults(handler=cmd_referee)

    rules = sub.add_parser("rules", help="list the rule presets")
    rules.set_defaults(handler=cmd_rules)

    for name, module in SERVICES.items():
        sub.add_parser(name, help=f"run the {name} service (python -m {module}; --help lists its options)")
    bot = sub.add_parser("bot", help="for bot authors: play, check or run your bot (a file: path/to/mybot.py:MyBot)")
    bot_sub = bot.add_subparsers(dest="bot_command", required=True)
    add_play_parser(bot_sub)
    bot_cli.register(bot_sub)  # check, run
    engine_cli.register(sub, bot_sub, up_place)  # challenge, bot connect
    ladder_cli.register(sub)  # up, demo, ladder
    tournament_cli.register(sub)  # tournament create|list|status|standings|export|resume
    return parser


SERVICES = {"engine": "services.engine", "matchmaker": "services.matchmaker"}


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args``, but arguments left over are refused by the command they were given to,
    under its own usage (``ohell ladder show: error: unrecognized arguments: extra``): argparse
    refuses them at the top, under the usage of every ``ohell`` command, which says nothing of the
    command's own arguments."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = parser
        while chosen := next(
            (action for action in command._actions if isinstance(action, argparse._SubParsersAction)), None
        ):
            command = chosen.choices[getattr(args, chosen.dest)]
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in SERVICES:  # a deployable above this library: run it as its own module
        os.execv(sys.executable, [sys.executable, "-m", SERVICES[argv[0]], *argv[1:]])
    args = parse_arguments(build_parser(), argv)
    try:
        return int(args.handler(args))
    except OhHellError as error:
        errors.print(labelled("error:", "red", f" {error}"), soft_wrap=True)  # one line, however long
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
