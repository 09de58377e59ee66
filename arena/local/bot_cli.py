"""``ohell bot check`` and ``ohell bot run``: the bot author's commands (``ohell bot play`` is
``ohell play``, registered next to it in ``arena.cli``), and where they, ``ohell bot connect`` and
``ohell challenge`` find ``ohell up``'s services when given no address (``UpService``)."""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from arena.local.config import SETTINGS, stack_folder, stack_setting
from arena.local.output import labelled, text_console
from arena.play.specs import TimeControl
from arena.rpc.data_folder import ENGINE_ADDRESS, ENGINE_SOCKET, MATCHMAKER_ADDRESS, MATCHMAKER_SOCKET
from arena.sdk.arguments import UINT32, add_token_options, address_or_stack, agent_token, host_port, whole
from arena.sdk.session import ILLEGAL_LINE
from arena.wire import fixed, given_rules
from ohell.errors import OhHellError

console = text_console()


@dataclass(frozen=True)
class UpService:
    """A service of ``ohell up`` as ``ohell up`` run beside the command set itself up (as the host
    commands find the matchmaker): its socket in its data folder ($OHELL_DATA_DIR, else data_dir in
    ohell.toml, else the default) when that file is there, else its address (the environment, else
    ``setting`` in ohell.toml, else the default). The socket comes first whatever the environment says:
    it keeps the agent token off TCP ports another user could take while the stack is down."""

    socket: str  # its file in the data folder
    tcp: str  # its address when ohell up's environment and ohell.toml name none
    setting: str  # the ohell.toml key (arena.local.config.SETTINGS) of its address

    def address(self, given: str | None, flag: str) -> str:
        if given:
            return address_or_stack(given, self.socket, self.tcp, flag)
        tcp = stack_setting(self.setting, os.environ)
        return address_or_stack(None, self.socket, tcp, flag, stack_folder(os.environ)[0])

    def help(self) -> str:
        return (
            f"ohell up's socket {self.socket} in its data folder ($OHELL_DATA_DIR, else data_dir in ohell.toml,"
            f" else the default) when that file is there, else ${SETTINGS[self.setting].env}, else {self.setting}"
            f" in ohell.toml, else {self.tcp}"
        )


ENGINE = UpService(ENGINE_SOCKET, ENGINE_ADDRESS, "engine_address")
MATCHMAKER = UpService(MATCHMAKER_SOCKET, MATCHMAKER_ADDRESS, "matchmaker_address")


class FirstTracebacks(logging.Filter):
    """Lets the bot's first ``limit`` exceptions, and its first ``limit`` illegal answers, through
    to the log, then only counts them (the table has the counts): a bot answering illegally put a
    line per answer on the terminal, some 4,000 for one that always played the two of clubs."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit, self.seen, self.illegal = limit, 0, 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg is ILLEGAL_LINE:
            self.illegal += 1
            return self.first(record, self.illegal, "(more illegal answers of the bot: left out)")
        if record.exc_info is None:
            return True
        self.seen += 1
        return self.first(record, self.seen, "(more exceptions of the bot: tracebacks left out)")

    def first(self, record: logging.LogRecord, seen: int, more: str) -> bool:
        if seen == self.limit + 1:
            record.msg, record.args, record.exc_info = more, (), None
            return True
        return seen <= self.limit


def cmd_check(args: argparse.Namespace) -> int:
    from arena.local.check import CHECK_PRESETS, check_bot

    presets = [name.strip() for name in args.presets.split(",")] if args.presets else list(CHECK_PRESETS)
    if args.games < 1:
        raise OhHellError(f"--games must be at least 1, got {args.games}")
    for name in presets:  # all before the first game: "classic,nope" played classic, then said "unknown preset"
        given_rules(name, (), ("--presets", ""))
    sdk_log, first_tracebacks = logging.getLogger("arena.sdk"), FirstTracebacks(3)
    sdk_log.addFilter(first_tracebacks)  # for this check only: the command may run inside a longer process
    try:
        with console.status(f"checking {args.bot} on {', '.join(presets)}") as status:
            report = check_bot(
                args.bot,
                args.games,
                args.seed,
                presets,
                on_game=lambda name, done: status.update(f"checking {args.bot}: {name}, game {done}/{args.games}"),
            )
    finally:
        sdk_log.removeFilter(first_tracebacks)
    opponents = list(report.presets[0].opponents_exact) if report.presets else []
    table = Table(title=f"ohell bot check {report.bot}: {args.games} games per preset vs {', '.join(opponents)}")
    table.add_column("preset", no_wrap=True)
    for column in ("decisions", "illegal", "raised", "p50 ms", "p95 ms", "exact", "score"):
        table.add_column(column, justify="right")
    for bot in opponents:
        table.add_column(f"{bot} exact", justify="right")
    for result in report.presets:
        table.add_row(
            result.preset,
            str(result.decisions),
            Text(str(result.illegal), style="red" if result.illegal else ""),
            Text(str(result.exceptions), style="red" if result.exceptions else ""),
            f"{result.percentile_ms(0.50):.3f}",
            f"{result.percentile_ms(0.95):.3f}",
            f"{100 * result.exact_rate:.1f}%",
            fixed(result.mean_score, 1),
            *(f"{100 * result.opponents_exact[bot]:.1f}%" for bot in opponents),
        )
    console.print(table)
    limits = TimeControl()  # what a ladder's match gives each seat
    late = sum(1 for result in report.presets for seconds in result.timings if 1000 * seconds > limits.decision_ms)
    if late:  # a bot passed all the same, then forfeited its ladder matches on TIMEOUT faults
        console.print(
            labelled(
                "slow",
                "yellow",
                f": {late} decision(s) took over {limits.decision_ms} ms, a ladder's time per decision; past it a"
                f" match's {limits.time_bank_ms // 1000} s time bank pays the excess, then each late answer is a"
                f" TIMEOUT fault ({limits.max_faults} forfeit the match)",
            )
        )
    if report.passed:
        console.print(labelled("passed", "green", ": no illegal action, no exception"))
        return 0
    console.print(labelled("failed", "red", ": illegal actions or exceptions (their tracebacks are logged above)"))
    return 1


def cmd_run(args: argparse.Namespace) -> int:
    from arena.sdk import run_on_ladder, serve
    from arena.sdk.local import bot_from_spec

    token = agent_token(args)
    if args.serve and args.matches:
        raise OhHellError(
            "--matches counts the matches of a connected agent: an endpoint (--serve) plays until stopped"
        )
    bot = bot_from_spec(args.bot, args.seed)  # a clear error for an unknown bot or a bad file, before connecting
    matchmaker = MATCHMAKER.address(args.matchmaker, "--matchmaker")
    if args.serve:
        serve(bot, args.serve, token, matchmaker=matchmaker, ladder=args.ladder)
    else:
        engine = ENGINE.address(args.engine, "--engine")
        run_on_ladder(bot, engine, matchmaker, token, args.ladder, matches=args.matches)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = sub.add_parser("check", help="validate a local bot: illegal actions, exceptions, speed, exact bids")
    check.add_argument("bot", help="path/to/mybot.py:MyBot, or a built-in bot name")
    check.add_argument(
        "--games",
        type=whole(1000, 1),
        default=8,
        help="games per preset, 1..1000 (seats rotate every game; default %(default)s)",
    )
    check.add_argument("--presets", help="comma-separated rule presets (default: a sample of each rule document)")
    check.add_argument(
        "--seed", type=int, default=1, help="game n (from 0) of each preset is dealt with SEED + n (default 1)"
    )
    check.set_defaults(handler=cmd_check)

    run = sub.add_parser(
        "run", help="play a bot on a ladder (connect, or serve with --serve; hold a ticket; play every table)"
    )
    run.add_argument("bot", help="path/to/mybot.py:MyBot, or a built-in bot name")
    # an endpoint (--serve) never dials the engine: the platform dials it, so an --engine given with
    # it would go unused without a word (argparse refuses the pair instead)
    how = run.add_mutually_exclusive_group()
    how.add_argument(
        "--engine",
        help="the engine service (gateway) the bot dials, HOST:PORT or unix:PATH, not with --serve"
        f" (default: {ENGINE.help()})",
    )
    run.add_argument(
        "--matchmaker",
        help=f"the matchmaker, HOST:PORT or unix:PATH (default: {MATCHMAKER.help()})",
    )
    add_token_options(run)
    run.add_argument("--ladder", required=True, help="the ladder's name (the host gives it)")
    run.add_argument("--matches", type=whole(UINT32, 1), help="stop after this many matches (default: play for ever)")
    run.add_argument("--seed", type=int, default=0, help="seed of a built-in bot (default %(default)s)")
    how.add_argument(
        "--serve",
        metavar="HOST:PORT",
        type=host_port,
        help="an endpoint agent: listen here (the address the host registered, or one it forwards to) "
        "instead of dialling the engine; the platform dials it for each match (so no --engine)",
    )
    run.set_defaults(handler=cmd_run)
