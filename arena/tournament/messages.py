"""Entrants as the tournament RPCs' messages (``ohell.v1.TournamentEntrant``): from the text the host
writes (``builtin:BOT``, ``connected:AGENT_ID``, ``endpoint:HOST:PORT``, each with an optional
``=NAME``) for the command line and the host page, and from the domain's ``SeatSpec`` for answers."""

from __future__ import annotations

import time

from arena import clock
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.tournament.model import parse_entrant


def entrant_to_proto(entrant: SeatSpec) -> tpb.TournamentEntrant:
    if entrant.kind == "builtin":
        return tpb.TournamentEntrant(name=entrant.name, bot=entrant.bot)
    if entrant.kind == "connected":
        return tpb.TournamentEntrant(name=entrant.name, agent_id=entrant.agent_id)
    return tpb.TournamentEntrant(name=entrant.name, endpoint=entrant.address)


def entrant_from_text(text: str) -> tpb.TournamentEntrant:
    """TournamentError naming the entrant when the text is not one. A ``connected:`` entrant without
    ``=NAME`` is sent with no name, so the matchmaker names it as its agent is registered (``alice``,
    not ``a12``: docs/tournaments.md); the others' defaults are the same on both sides."""
    entrant = parse_entrant(text)
    message = entrant_to_proto(entrant)
    if entrant.kind == "connected" and not text.partition("=")[2].strip():
        message.name = ""
    return message


def waiting_text(table: tpb.TournamentTable, now_ms: int | None = None) -> str:
    """What a table waits for at its start, '' when nothing: 'waits for alice (connected, not online)
    until 02:51:10 UTC (42 s from now); whoever is still away then forfeits the table'."""
    if not table.waiting_for:
        return ""
    left_s = max(0, round((table.waiting_until_ms - (clock.now_ms() if now_ms is None else now_ms)) / 1000))
    until = time.strftime("%H:%M:%S UTC", time.gmtime(table.waiting_until_ms / 1000))
    return (
        f"waits for {', '.join(table.waiting_for)} (connected, not online) until {until} ({left_s} s from now);"
        " whoever is still away then forfeits the table"
    )


def away_text(away: tpb.TournamentAway) -> str:
    """'ghost (connected) away since 02:51:10 UTC: forfeited table r1t0 after waiting for it; its next
    tables forfeit it without waiting while it is not online'."""
    since = time.strftime("%H:%M:%S UTC", time.gmtime(away.since_ms / 1000))
    return (
        f"{away.entrant} (connected) away since {since}: forfeited table {away.table_id} after waiting for it;"
        " its next tables forfeit it without waiting while it is not online"
    )


def no_standings_text(games_done: int) -> str:
    """What the standings say while they have no row. They count a deal only once it has been played
    in every rotation, so games may have been played and recorded with no standing yet (a running
    tournament's first deal, one cancelled midway): saying no game had finished contradicted the
    progress shown beside it ('1/120 games')."""
    if games_done == 0:
        return "No game has finished yet."
    played = f"{games_done} game played" if games_done == 1 else f"{games_done} games played"
    return (
        f"No deal is complete in the {played}: a deal counts in the standings once it has been"
        " played in every rotation."
    )
