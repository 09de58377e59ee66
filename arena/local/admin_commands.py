"""What each host command does (arena/local/admin.py builds the command tree and the connection)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.table import Table

from arena.ladder.roster import roster_names, roster_text
from arena.ladder_text import ENTRY_TEXT, changes, entry_text
from arena.local.admin_client import CallError, Host, Unreachable
from arena.local.admin_show import print_match, when
from arena.local.output import labelled, options_text, text_console
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.files import write_named_file
from arena.wire import (
    ENTRY_NAMES,
    fixed,
    given_rules,
    match_total_text,
    proto_rules_label,
    record_from_json,
    rules_from_proto,
    rules_to_proto,
    win_share,
    with_options,
)
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError
from ohell.referee import referee

console = text_console()
KINDS = {"connected": pb.AGENT_KIND_CONNECTED, "builtin": pb.AGENT_KIND_BUILTIN, "endpoint": pb.AGENT_KIND_ENDPOINT}
KIND_NAMES = {number: name for name, number in KINDS.items()}
MAX_IMPORT = 5000
MAX_IMPORT_BYTES = 4 * 1024 * 1024  # 5,000 rows of a name and other columns fit many times


TEXT_COLUMNS = {"name", "agent", "ladder", "match", "seats", "rules", "house bots", "kind", "bot / endpoint"}
TEXT_COLUMNS |= {"version", "state", "finished (UTC)", "entry"}


def table(title: str, *columns: str) -> Table:
    """Words to the left, numbers to the right."""
    out = Table(title=title)
    for column in columns:
        out.add_column(column, justify="left" if column in TEXT_COLUMNS else "right")
    return out


# ---- ladders


def ladder_create(host: Host, args: argparse.Namespace) -> int:
    rules = rules_to_proto(given_rules(args.rules, args.option))
    rules.preset = args.rules
    bots = [b.strip() for b in args.house_bots.split(",") if b.strip()]
    ladder = pb.Ladder(
        name=args.name,
        rules=rules,
        seats=args.seats,
        house_fill=bool(bots),
        fill_after_seconds=args.fill_after,
        house_bots=bots,
        base_window=args.base_window or 0,  # 0: the default
        widen_per_second=args.widen_per_second or 0,
        entry=ENTRY_NAMES[args.entry],
    )
    created = host.call("CreateLadder", ladder=ladder).ladder
    console.print(f"ladder {created.name} created: {proto_rules_label(created.rules)} rules, {created.seats} seats")
    if entry_text(created) == "open":
        console.print(f"  entry: {ENTRY_TEXT['open']}")
    return 0


def ladder_update(host: Host, args: argparse.Namespace) -> int:
    """UpdateLadder takes a whole definition: the ladder as the matchmaker has it, with the settings given
    changed (a change made by someone else between the two calls is overwritten)."""
    if not any(getattr(args, flag) not in (None, []) for flag in UPDATABLE):
        flags = ", ".join("--" + flag.replace("_", "-") for flag in UPDATABLE)
        raise OhHellError(f"ladder update {args.name}: nothing to change: give one or more of {flags}")
    current = host.call("GetLadder", name=args.name).ladder
    current.ClearField("paused")  # read only: pause and resume change it
    ladder = pb.Ladder()
    ladder.CopyFrom(current)
    if args.rules is not None or args.option:
        ladder.rules.CopyFrom(_updated_rules(current.rules, args.rules, args.option))
    if args.house_bots is not None:
        bots = [b.strip() for b in args.house_bots.split(",") if b.strip() and b.strip() != "none"]
        ladder.ClearField("house_bots")
        ladder.house_bots.extend(bots)
        ladder.house_fill = bool(bots)
    for flag, field in NUMBER_FIELDS.items():
        if getattr(args, flag) is not None:
            setattr(ladder, field, getattr(args, flag))
    if args.entry is not None:
        ladder.entry = ENTRY_NAMES[args.entry]
    if ladder == current:
        console.print(f"ladder {args.name} unchanged: it has these settings already")
        return 0
    updated = host.call("UpdateLadder", ladder=ladder).ladder
    console.print(f"ladder {args.name} updated:")
    for change in changes(current, updated):
        console.print(f"  {change}")
    console.print("  the tables formed from now on follow it; a match formed before keeps its seats and rules")
    return 0


UPDATABLE = ("rules", "option", "seats", "house_bots", "fill_after", "base_window", "widen_per_second", "entry")
# the flags of ladder create and update that set a number of the Ladder message as given
NUMBER_FIELDS = {
    "seats": "seats",
    "fill_after": "fill_after_seconds",
    "base_window": "base_window",
    "widen_per_second": "widen_per_second",
}


def _updated_rules(current: Any, preset_name: str | None, options: list[str]) -> Any:
    """``--rules``: that preset with the ``--option``s given (as ``ladder create``); ``--option`` alone:
    the ladder's rules with those options changed, its preset kept."""
    if preset_name is not None:
        rules = rules_to_proto(given_rules(preset_name, options))
        rules.preset = preset_name
        return rules
    try:
        base = rules_from_proto(current)
    except OhHellError:  # rules of a newer platform: --rules replaces them whole
        raise OhHellError("the ladder's rules are of a newer platform: give --rules PRESET with the options") from None
    rules = rules_to_proto(with_options(base, options))
    rules.preset = current.preset
    return rules


def house_bots_text(ladder: Any) -> str:
    """Whether the house bots fill tables too: a ladder made over the RPC may have bots and no fill."""
    if not ladder.house_bots:
        return "none"
    when = f"fill after {ladder.fill_after_seconds:g} s" if ladder.house_fill else "not filling tables: house_fill off"
    return f"{', '.join(ladder.house_bots)} ({when})"


def ladder_list(host: Host, args: argparse.Namespace) -> int:
    out = table("ladders", "ladder", "rules", "seats", "house bots", "entry", "state")
    for ladder in host.call("ListLadders").ladders:
        state = "paused" if ladder.paused else "running"
        bots = ",".join(ladder.house_bots)
        out.add_row(ladder.name, proto_rules_label(ladder.rules), str(ladder.seats), bots, entry_text(ladder), state)
    console.print(out)
    return 0


def ladder_show(host: Host, args: argparse.Namespace) -> int:
    reply = host.call("GetLadder", name=args.name)
    ladder = reply.ladder
    console.print(f"ladder {ladder.name}: {proto_rules_label(ladder.rules)} rules, {ladder.seats} seats")
    if ladder.paused:  # its agents still queue, and wait: say why
        console.print(f"  paused: no tables are formed until `ohell ladder resume {ladder.name}`")
    console.print(f"  house bots: {house_bots_text(ladder)}")
    entry = entry_text(ladder)
    console.print(f"  entry: {ENTRY_TEXT.get(entry, entry)}")
    console.print(f"  waiting now: {reply.tickets_waiting}")
    try:  # as `ohell rules` lists a preset's
        rules = options_text(rules_from_proto(ladder.rules).to_dict())
    except OhHellError:  # rules from a newer platform: the message as it came
        rules = _json(ladder.rules)
    console.print(f"  rules: {rules}")
    return 0


def _json(message: Any) -> str:
    from google.protobuf import json_format

    return json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None)


def _admin(method: str, done: str) -> Any:
    def run(host: Host, args: argparse.Namespace) -> int:
        host.call(method, name=args.name)
        console.print(f"ladder {args.name} {done}")
        return 0

    return run


ladder_pause = _admin("PauseLadder", "paused: no new tables are formed")
ladder_resume = _admin("ResumeLadder", "resumed")
_delete = _admin("DeleteLadder", "deleted")


def known_ladder(host: Host, name: str, flag: str) -> None:
    """Refuse a ladder the matchmaker does not have, naming the argument that gave it."""
    try:
        host.call("GetLadder", name=name)
    except CallError as error:
        if error.code == "NOT_FOUND":
            raise OhHellError(f"{flag} {name}: no such ladder (`ohell ladder list` shows them)") from None
        raise


def ladder_delete(host: Host, args: argparse.Namespace) -> int:
    known_ladder(host, args.name, "ladder delete")  # before asking to confirm a ladder that is not there
    if not args.yes:
        if not os.isatty(0):
            raise OhHellError(f"deleting ladder {args.name}: add --yes (no terminal to ask)")
        if input(f"delete ladder {args.name}? type its name: ").strip() != args.name:
            raise OhHellError("not deleted")
    return int(_delete(host, args))


# ---- agents


@contextmanager
def _tokens_file(path: str, append: bool) -> Iterator[Callable[[list[str]], None]]:
    """The --tokens file opened before any agent is registered (a folder that is missing or not
    writable lost every token issued: the file was opened after the last one), mode 600; yields a
    function that writes one (name, agent id, token) row and flushes it. Not ``append``: a new file.
    A file it made is removed again when no row was written (a refused ``agent register --tokens NEW``
    left an empty NEW, which ``agent import --tokens NEW`` then refused as existing)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    made = not append
    try:
        if append:
            try:
                descriptor = os.open(path, flags)
            except FileNotFoundError:
                made = True
        if made:
            descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise OhHellError(
            f"--tokens {path} exists: choose a new file (tokens are secrets, never overwritten)"
        ) from None
    except OSError as error:
        raise OhHellError(f"--tokens {path}: {error.strerror or error}") from None
    written = 0
    try:
        with os.fdopen(descriptor, "w", newline="") as out:
            os.fchmod(descriptor, 0o600)  # a file the host made may be readable by others: it holds secrets now
            header = os.fstat(descriptor).st_size == 0
            writer = csv.writer(out, lineterminator="\n")  # not CSV's CRLF: a token cut from a line keeps no \r

            def save(row: list[str]) -> None:
                nonlocal written, header
                if header:
                    writer.writerow(["name", "agent_id", "token"])
                    header = False
                writer.writerow(row)
                out.flush()
                written += 1

            yield save
    finally:
        if not written and made:
            Path(path).unlink(missing_ok=True)


def _check_join(host: Host, args: argparse.Namespace) -> None:
    """Refuse before registering anyone: a kind without what it needs (refused by the matchmaker
    for every row of an import), ``--join`` for an agent that queues itself, a ladder that does not
    exist."""
    if args.kind == "builtin" and not args.bot:
        raise OhHellError(f"--kind builtin needs --bot: {', '.join(sorted(BOT_FACTORIES))}")
    if args.kind != "builtin" and args.bot:
        raise OhHellError(f"--bot is for --kind builtin only: a {args.kind} agent plays its own bot")
    if args.kind == "endpoint" and not getattr(args, "endpoint", ""):
        raise OhHellError(
            "--kind endpoint needs the address the platform dials: register each endpoint agent with "
            "ohell agent register NAME --kind endpoint --endpoint HOST:PORT"
        )
    _check_ladders_to_join(host, args.kind, args.join)


def _check_ladders_to_join(host: Host, kind: str, ladders: list[str] | None) -> None:
    if ladders and kind != "builtin":
        raise OhHellError(
            f"--join is for built-in agents: a {kind} agent queues itself with its token while it runs "
            f"(ohell bot run{' --serve HOST:PORT' if kind == 'endpoint' else ''}: docs/protocol.md)"
        )
    for ladder in ladders or []:
        known_ladder(host, ladder, "--join")


def _join(host: Host, agent: Any, token: str, ladders: list[str] | None) -> None:
    """Queue a new built-in agent on ``ladders`` with its own token (JoinQueue is the agent's call):
    its ticket has no lease, so it plays there after every match until revoked or LeaveQueue."""
    as_agent = Host(host.channel, host.address, token)
    for ladder in ladders or []:
        as_agent.call("JoinQueue", ladder=ladder, agent_id=agent.agent_id)
        console.print(f"agent {agent.name} queued on ladder {ladder}")


def agent_register(host: Host, args: argparse.Namespace) -> int:
    _check_join(host, args)
    if args.tokens:
        with _tokens_file(args.tokens, append=True) as save:
            reply = host.call(
                "RegisterAgent", name=args.name, kind=KINDS[args.kind], bot=args.bot, endpoint=args.endpoint
            )
            save([reply.agent.name, reply.agent.agent_id, reply.token])
        console.print(f"agent {reply.agent.name} registered as {reply.agent.agent_id}; token added to {args.tokens}")
    else:
        reply = host.call("RegisterAgent", name=args.name, kind=KINDS[args.kind], bot=args.bot, endpoint=args.endpoint)
        console.print(f"agent {reply.agent.name} registered as {reply.agent.agent_id}")
        print(f"token {reply.token}")
    _join(host, reply.agent, reply.token, args.join)
    return 0


def read_names(path: str) -> list[str]:
    """The names of an import file: read at most MAX_IMPORT_BYTES (a disk image or /dev/zero given by
    mistake took all memory), counted before their repeats are looked for."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_IMPORT_BYTES + 1)
        text = roster_text(data)
    except (OSError, UnicodeDecodeError) as error:
        raise OhHellError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise OhHellError(f"{path}: over {MAX_IMPORT_BYTES // 1024 // 1024} MiB, more than an import of names needs")
    try:
        names = roster_names(text)
    except csv.Error as error:  # a field over the reader's limit of 128 KB
        raise OhHellError(f"cannot read {path} as a CSV: {error}") from None
    if not names:
        raise OhHellError(f"{path}: no names (the first column of each row)")
    if len(names) > MAX_IMPORT:
        raise OhHellError(f"{path}: {len(names)} names, at most {MAX_IMPORT} at a time")
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise OhHellError(f"{path}: the name {repeated[0]!r} appears more than once")
    return names


def agent_import(host: Host, args: argparse.Namespace) -> int:
    _check_join(host, args)
    names = read_names(args.csv)
    rows: list[list[str]] = []
    failed: list[str] = []
    with _tokens_file(args.tokens, append=False) as save:
        for index, name in enumerate(names):
            try:
                reply = host.call("RegisterAgent", name=name, kind=KINDS[args.kind], bot=args.bot)
                rows.append([reply.agent.name, reply.agent.agent_id, reply.token])
                save(rows[-1])
            except Unreachable as error:  # the rest would fail alike; the tokens already given are saved
                if not rows and not failed:  # nothing to say but this (the names refused before it are said)
                    raise
                failed.append(f"{', '.join(names[index:])}: {error}")
                break
            except OhHellError as error:
                failed.append(f"{name}: {error}")
            except KeyboardInterrupt:  # Ctrl-C: as above, the tokens already given are saved and said
                failed.append(
                    f"{', '.join(names[index:])}: stopped (Ctrl-C; {name} may be registered without its token)"
                )
                break
    for name, agent_id, token in rows:
        _join(host, pb.Agent(name=name, agent_id=agent_id), token, args.join)
    console.print(
        f"{len(rows)} of {len(names)} agents registered; tokens in {args.tokens}" if rows else "none registered"
    )
    for line in failed:
        console.print(labelled("not registered", "red", f" {line}"))
    return 1 if failed else 0


def agent_rotate(host: Host, args: argparse.Namespace) -> int:
    """``--join``: a revoked built-in agent is enrolled nowhere, and JoinQueue takes its own token, which
    only this command shows: without it no host command could queue the agent again."""
    if args.join:
        kind = host.call("GetAgent", agent_id=args.agent_id).agent.kind
        _check_ladders_to_join(host, KIND_NAMES.get(kind, "unknown"), args.join)
    if args.tokens:
        with _tokens_file(args.tokens, append=True) as save:
            reply = host.call("RotateAgentToken", agent_id=args.agent_id)
            save([reply.agent.name, reply.agent.agent_id, reply.token])
        console.print(f"agent {args.agent_id}: new token added to {args.tokens}; the old one no longer works")
    else:
        reply = host.call("RotateAgentToken", agent_id=args.agent_id)
        print(f"token {reply.token}")
    _join(host, reply.agent, reply.token, args.join)
    return 0


def agent_revoke(host: Host, args: argparse.Namespace) -> int:
    host.call("RevokeAgentToken", agent_id=args.agent_id)
    console.print(f"agent {args.agent_id}: token revoked (rotate to give it a new one)")
    return 0


def revoked_text(agent: pb.Agent) -> str:
    """The ``token`` column: empty while the agent's token works."""
    if not agent.revoked:
        return ""
    return f"revoked {when(agent.revoked_ms)} UTC" if agent.revoked_ms else "revoked"


def agent_list(host: Host, args: argparse.Namespace) -> int:
    out = table("agents", "agent", "name", "kind", "bot / endpoint", "version", "token")
    for agent in host.pages("ListAgents", "agents"):
        kind = KIND_NAMES.get(agent.kind, "?") + (" (house)" if agent.house else "")
        out.add_row(agent.agent_id, agent.name, kind, agent.bot or agent.endpoint, agent.version, revoked_text(agent))
    console.print(out)
    return 0


# ---- results


def leaderboard(host: Host, args: argparse.Namespace) -> int:
    out = table(f"leaderboard of {args.ladder}", "#", "agent", "name", "rating", "mu", "sigma", "games")
    for column in ("exact bids", "win share", "faults"):
        out.add_column(column, justify="right")
    for s in host.pages("GetLeaderboard", "standings", ladder=args.ladder):
        row = [
            str(s.rank or ""),
            s.agent_id,
            s.name,
            fixed(s.ordinal, 2),
            fixed(s.mu, 2),
            fixed(s.sigma, 2),
            str(s.games),
        ]
        out.add_row(*row, f"{100 * s.exact_bid_rate:.1f}%", win_share(s.wins, s.games), str(s.faults))
    console.print(out if out.row_count else f"no agent has played on ladder {args.ladder} yet")
    return 0


def matches(host: Host, args: argparse.Namespace) -> int:
    if not args.ladder and not args.agent and not args.running:
        # as on the web app's match list: finished matches of a ladder or an agent, not the whole archive's
        raise OhHellError(
            "give --ladder, --agent or both: finished matches are listed of a ladder or an agent"
            " (--running alone lists the matches in play on every ladder)"
        )
    if not 1 <= args.limit <= 500:
        raise OhHellError(f"--limit must be from 1 to 500, got {args.limit}")
    fields: dict[str, Any] = {"ladder": args.ladder, "agent_id": args.agent, "page_size": args.limit}
    if args.running:
        fields["state"] = "running"
    reply = host.call("ListMatches", **fields)
    out = table("matches", "match", "state", "finished (UTC)", "seats", "totals")
    for m in reply.matches:
        seats = " ".join(m.agent_names) if len(m.agent_names) == len(m.agent_ids) else " ".join(m.agent_ids)
        out.add_row(m.match_id, m.state, when(m.finished_ms), seats, " ".join(map(str, m.totals)))
    state = "running" if args.running else "finished"
    if not reply.matches and args.agent and not agent_exists(host, args.agent):
        # the matchmaker looks agents up by id: an agent's name listed 'no finished matches', as if unplayed
        raise OhHellError(
            f"no agent has the id {args.agent[:80]!r}: --agent takes an agent's id (e.g. a12, as `ohell agent "
            "list` and the leaderboard show it, and `ohell bot run` says on connecting), not its name"
        )
    if not reply.matches and not reply.total_size:  # an empty table reads as a failure to list them
        whose = " and ".join(
            part for part in (args.ladder and f"ladder {args.ladder}", args.agent and f"agent {args.agent}") if part
        )
        whose = f" of {whose}" if whose else " on any ladder"
        console.print(f"no {state} matches{whose}" + ("" if args.running else " (--running: the matches in play)"))
        return 0
    console.print(out)
    console.print(f"{len(reply.matches)} of {match_total_text(reply.total_size)} {state} matches")
    return 0


def agent_exists(host: Host, agent_id: str) -> bool:
    """Whether the matchmaker has an agent of this id; True unless it says surely not."""
    try:
        host.call("GetAgent", agent_id=agent_id)
    except CallError as error:
        return error.code != "NOT_FOUND"
    return True


TOURNAMENT_GAME = re.compile(r"([a-z0-9][a-z0-9_-]{0,39})/[^/]+/d\d+/r\d+")  # arena.tournament.play.game_id


def match_show(host: Host, args: argparse.Namespace) -> int:
    try:
        reply = host.call("GetMatch", match_id=args.match_id)
    except CallError as error:
        game = TOURNAMENT_GAME.fullmatch(args.match_id)
        if error.code != "NOT_FOUND" or game is None:
            raise
        # the id a tournament's agent was told its game by: no ladder match, so GetMatch has none
        raise OhHellError(
            f"{error}: that is the id of a game of tournament {game.group(1)}, not of a ladder match: its record is in"
            f" `ohell tournament export {game.group(1)} --format json` once the tournament has ended"
            f" (its records, under {args.match_id.partition('/')[2]!r})"
        ) from None
    if not reply.record_json:
        console.print(f"match {args.match_id}: {reply.match.state}, no record yet (watch it live on the web app)")
        return 0
    record = record_from_json(reply.record_json, f"the matchmaker at {host.address}")
    try:
        print_match(console, reply.match, record, args.tricks)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:  # any server may answer
        raise OhHellError(
            f"the matchmaker at {host.address} sent a record this command cannot show "
            f"({type(error).__name__}: {str(error)[:200]})"
        ) from None
    if args.out:
        write_named_file(args.out, json.dumps(record, indent=1))
        console.print(f"record written to {args.out}")
    if args.referee:
        verdict = referee(record)
        console.print(f"referee: {verdict.summary()}")
        return 0 if verdict.valid else 1
    return 0
