"""The host's command tree on a running stack, over the matchmaker's gRPC API with the host credential:
``ohell ladder create|update|list|show|pause|resume|delete``, ``ohell agent register|import|rotate|revoke|list``,
``ohell ladder export``, ``ohell leaderboard``, ``ohell matches``, ``ohell match show``. What each does
is in arena/local/admin_commands.py (export: arena/local/export.py); the connection and the credential
in arena/local/admin_client.py.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from arena.ladder.limits import LADDER_NAME_RULE
from arena.ladder.model import AGENT_NAME_RULE
from arena.local import admin_commands as c
from arena.local import export
from arena.local.admin_client import add_common, with_host
from arena.play.specs import builtin_bots
from arena.sdk.arguments import UINT32, whole

JOIN_HELP = "queue the new built-in agent on this ladder (repeat for several): it plays there until revoked"
KINDS = ("connected", "builtin", "endpoint")
KIND_HELP = (
    "connected: the author's program dials the engine (default); builtin: a built-in bot the workers play "
    "(--bot); endpoint: the platform dials the author's server (--endpoint)"
)
NAME_HELP = f"a name is {AGENT_NAME_RULE}"
BOT_HELP = f"the built-in bot of a builtin agent ({builtin_bots()})"


def register(sub: argparse._SubParsersAction, ladder_sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def command(parent: argparse._SubParsersAction, name: str, handler: Any, text: str, public: bool = False) -> Any:  # type: ignore[type-arg]
        parser = add_common(parent.add_parser(name, help=text, description=text), public)
        parser.set_defaults(handler=with_host(handler))
        return parser

    create = command(ladder_sub, "create", c.ladder_create, "create a ladder")
    create.add_argument("name", help=f"the ladder's name: {LADDER_NAME_RULE}")
    definition_flags(create, creating=True)
    update = command(
        ladder_sub,
        "update",
        c.ladder_update,
        "change a ladder's settings (those given; the others stay): the tables formed from then on follow them",
    )
    update.add_argument("name")
    definition_flags(update, creating=False)
    command(ladder_sub, "list", c.ladder_list, "list the ladders", public=True)
    for name, text in (("show", "one ladder: rules, seats, queue"), ("pause", "stop forming tables"), ("resume", "")):
        parser = command(ladder_sub, name, getattr(c, f"ladder_{name}"), text or "form tables again", name == "show")
        parser.add_argument("name")
    delete = command(ladder_sub, "delete", c.ladder_delete, "delete a ladder (its matches stay in the archive)")
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="do not ask")

    agent = sub.add_parser("agent", help="register agents and manage their tokens (host)")
    agent_sub = agent.add_subparsers(dest="agent_command", required=True)
    reg = command(agent_sub, "register", c.agent_register, "register one agent and print (or save) its token")
    reg.add_argument("name", help=NAME_HELP)
    reg.add_argument("--kind", choices=KINDS, default="connected", help=KIND_HELP)
    reg.add_argument("--bot", default="", help=BOT_HELP)
    reg.add_argument("--endpoint", default="", help="host:port (kind endpoint)")
    reg.add_argument("--tokens", help="append name,agent_id,token to this CSV file instead of printing the token")
    reg.add_argument("--join", action="append", metavar="LADDER", help=JOIN_HELP)
    imp = command(agent_sub, "import", c.agent_import, "register every name of a CSV; write their tokens to a file")
    imp.add_argument(
        "csv",
        help="a CSV whose first column is the name (a header row 'name' is skipped; columns separated by "
        f", ; or tab); {NAME_HELP}",
    )
    imp.add_argument("--tokens", required=True, help="write name,agent_id,token here (created; mode 600)")
    imp.add_argument("--kind", choices=KINDS, default="connected", help=KIND_HELP)
    imp.add_argument("--bot", default="", help=BOT_HELP)
    imp.add_argument("--join", action="append", metavar="LADDER", help=JOIN_HELP)
    for name, text in (("rotate", "give an agent a new token (the old one stops working)"), ("revoke", "")):
        parser = command(agent_sub, name, getattr(c, f"agent_{name}"), text or "revoke an agent's token")
        parser.add_argument("agent_id")
        if name == "rotate":
            parser.add_argument("--tokens", help="append the new token to this CSV file instead of printing it")
            parser.add_argument(
                "--join",
                action="append",
                metavar="LADDER",
                help="queue the built-in agent on this ladder with its new token (repeat for several): a revoked"
                " one is queued nowhere",
            )
    command(agent_sub, "list", c.agent_list, "list the registered agents")

    board = command(sub, "leaderboard", c.leaderboard, "a ladder's leaderboard", public=True)
    board.add_argument("ladder")
    matches = command(
        sub,
        "matches",
        c.matches,
        "finished matches of a ladder or an agent, newest first; or those in play",
        public=True,
    )
    matches.add_argument("--ladder", default="")
    matches.add_argument("--agent", default="", help="agent id")
    matches.add_argument("--limit", type=int, default=20, help="at most this many (1..500; default %(default)s)")
    matches.add_argument(
        "--running",
        action="store_true",
        help="the matches in play now, by id (of every ladder without --ladder and --agent)",
    )
    match = sub.add_parser("match", help="one match")
    match_sub = match.add_subparsers(dest="match_command", required=True)
    show = command(match_sub, "show", c.match_show, "one match, hand by hand", public=True)
    show.add_argument("match_id")
    show.add_argument("--tricks", action="store_true", help="every trick too")
    show.add_argument("--referee", action="store_true", help="replay the record and check every action")
    show.add_argument("--out", help="also write the record (JSON) here")
    out = add_common(ladder_sub.add_parser("export", help=EXPORT, description=export.__doc__))
    out.formatter_class = argparse.RawDescriptionHelpFormatter
    out.set_defaults(handler=export.run)
    out.add_argument("ladder")
    out.add_argument("--out", required=True, help="the folder (made when missing; its export files are replaced)")
    out.add_argument("--limit", type=int, default=0, help="only the newest N matches (0: all; through the stack)")
    out.add_argument("--database-url", help="read the SQL archive directly instead (no running stack needed)")


def definition_flags(parser: argparse.ArgumentParser, creating: bool) -> None:
    """The settings of ``ladder create``, with their defaults, and of ``ladder update``, where a flag
    left out keeps the ladder's setting."""

    def default(value: Any, text: str) -> dict[str, Any]:
        shown = f"{value:g}" if isinstance(value, float) else value
        return {"default": value, "help": f"{text} (default {shown})"} if creating else {"help": text}

    rules = "a rule preset, as 'ohell rules' lists them"
    if not creating:
        rules = (
            "a new rule preset (see 'ohell rules'): the ladder's rules become it with the --option's given;"
            " without --rules, each --option changes one rule of the ladder's rules"
        )
    parser.add_argument("--rules", **default("classic", rules))
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="override a rule")
    parser.add_argument("--seats", type=whole(UINT32), **default(4, "seats per table, 3..7"))
    bots = f"comma-separated built-in bots that fill tables ({builtin_bots()})"
    house_bots: dict[str, Any] = {"default": "", "help": bots} if creating else {"help": f"{bots}, or none for none"}
    parser.add_argument("--house-bots", **house_bots)
    fill = "seconds an agent waits before house bots fill"
    parser.add_argument("--fill-after", type=float, **default(10.0, fill))
    window = "agents whose ratings (mu) differ by at most this are seated together at once (default 5)"
    parser.add_argument("--base-window", type=above_zero, metavar="MU", help=window)
    widen = "how much that difference may grow per second an agent waits (default 2)"
    parser.add_argument("--widen-per-second", type=above_zero, metavar="MU", help=widen)
    entry = (
        "who may queue: host (only agents the host registered) or open (also agents that registered"
        " themselves, without a token, as RegisterAgent lets anyone while some ladder is open)"
    )
    parser.add_argument("--entry", choices=("host", "open"), **default("host", entry))


def above_zero(text: str) -> float:
    """A finite number above 0 (the matchmaker reads 0 as 'the default')."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text[:40]} is not a number above 0")
    return value


EXPORT = "a ladder's leaderboard, results (CSV) and match records (JSON lines) into a folder"
