"""Plain rows for the tournament templates from the matchmaker's tournament messages."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.tournament.messages import away_text, no_standings_text, waiting_text
from arena.wire import fixed, interval_text, proto_rules_label
from services.web.views import Row, when

STATE_NAMES = {
    tpb.TOURNAMENT_STATE_RUNNING: "running",
    tpb.TOURNAMENT_STATE_FINISHED: "finished",
    tpb.TOURNAMENT_STATE_CANCELLED: "cancelled",
}
FORMAT_NAMES = {tpb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round robin", tpb.TOURNAMENT_FORMAT_SWISS: "Swiss"}


def progress_row(progress: Any) -> Row:
    total = progress.games_total or 1
    return {
        "state": STATE_NAMES.get(progress.state, "unknown"),
        "round": progress.round,
        "rounds": progress.rounds,
        "tables": progress.tables,
        "tables_done": progress.tables_done,
        "games_done": progress.games_done,
        "games_total": progress.games_total,
        "percent": round(100 * progress.games_done / total, 1),
        "no_standings": no_standings_text(progress.games_done),
        "created": when(progress.created_ms),
        "finished": when(progress.finished_ms),
    }


def summary_row(tournament: Any, progress: Any, entrants: int | None = None) -> Row:
    """``entrants``: the count of a list's summary (which leaves the entrants out)."""
    return {
        "id": tournament.tournament_id,
        "format": FORMAT_NAMES.get(tournament.format, "?"),
        "entrants": len(tournament.entrants) if entrants is None else entrants,
        "seats": tournament.seats,
        "deals": tournament.deals,
        "preset": proto_rules_label(tournament.rules),
        **progress_row(progress),
    }


def entrant_row(entrant: Any) -> Row:
    kind = entrant.WhichOneof("player")
    label = {"bot": "built-in", "agent_id": "connected", "endpoint": "endpoint"}.get(kind or "", "?")
    return {"name": entrant.name, "kind": label, "what": getattr(entrant, kind) if kind else ""}


def standing_rows(standings: Any) -> list[Row]:
    """Each standing with its interval drawn on one scale shared by all rows (percent of the width)."""
    rows = list(standings)
    # an entrant with fewer than 2 deals has no interval yet: its mean alone is drawn
    ends = [(s.ci_low, s.ci_high) if s.HasField("ci_low") else (s.mean_duplicate,) * 2 for s in rows]
    low = min([end[0] for end in ends] + [0.0])
    high = max([end[1] for end in ends] + [0.0])
    span = (high - low) or 1.0

    def at(value: float) -> float:
        return round(100 * (value - low) / span, 2)

    return [
        {
            "rank": s.rank,
            "entrant": s.entrant,
            "games": s.games,
            "deals": s.deals,
            "mean": fixed(s.mean_duplicate, 2, sign=True),
            "ci": interval_text(s),
            "p_next": f"{s.p_above_next:.3f}" if s.HasField("p_above_next") else "",
            "deals_won": s.deals_won,
            "forfeits": s.forfeits,
            "mean_score": fixed(s.mean_score, 2),
            "bar_left": at(ci_low),
            "bar_width": max(at(ci_high) - at(ci_low), 0.5) if s.HasField("ci_low") else 0,
            "mark": at(s.mean_duplicate),
            "zero": at(0.0),
        }
        for s, (ci_low, ci_high) in zip(rows, ends, strict=True)
    ]


INLINE_GAMES = 12  # a table with more games links its own page of them: a page of 100 tables stays small
GAME_PLACE = re.compile(r"/d([0-9]+)/r([0-9]+)$")


def game_href(tourney_id: str, game: str) -> str:
    return f"/tournaments/{quote(tourney_id, safe='')}/games/{quote(game)}"


def table_href(tourney_id: str, table_id: str) -> str:
    return f"/tournaments/{quote(tourney_id, safe='')}/tables/{quote(table_id, safe='')}"


def table_row(table: Any, tourney_id: str = "") -> Row:
    """``replays``: (label, address) of each game's replay, once the tournament has ended (the
    matchmaker gives the games' ids only then); ``games_href``: instead, the address of the table's
    own page listing them, when it has more than ``INLINE_GAMES``."""
    many = len(table.game_ids) > INLINE_GAMES
    return {
        "id": table.table_id,
        "round": table.round,
        "entrants": ", ".join(table.entrants),
        "state": ": ".join(filter(None, (table.state, waiting_text(table)))),
        "attempts": table.attempts,
        "games": f"{table.games_done}/{table.games}",
        "forfeits": ", ".join(table.forfeits),
        "replays": [] if many else [(game.partition("/")[2], game_href(tourney_id, game)) for game in table.game_ids],
        "games_href": table_href(tourney_id, table.table_id) if many else "",
        "games_recorded": len(table.game_ids),
    }


def game_grid(table: Any, tourney_id: str) -> tuple[list[int], list[Row]]:
    """A table's recorded games as (its rotations, a row per deal set): each row's ``cells`` hold
    (label, replay address) by rotation, ('', '') where no game was recorded (a cancelled table)."""
    places = {}
    for game in table.game_ids:
        found = GAME_PLACE.search(game)
        if found:
            places[int(found.group(1)), int(found.group(2))] = game
    rotations = list(range(max([len(table.entrants)] + [turn + 1 for _, turn in places])))
    deals = sorted({deal for deal, _ in places})
    rows = []
    for deal in deals:
        games = [places.get((deal, turn), "") for turn in rotations]
        cells = [(game.partition("/")[2], game_href(tourney_id, game)) if game else ("", "") for game in games]
        rows.append({"deal": deal, "cells": cells})
    return rotations, rows


def detail(reply: Any, tables_page: str = "") -> dict[str, Any]:
    """What the tournament page (and its live part) shows of a GetTournament answer; ``tables_page``:
    the page token of its tables ('' for the first page)."""
    tournament = reply.tournament
    return {
        "t": summary_row(tournament, reply.progress),
        "grace": f"{tournament.grace_seconds:g}",
        "rules": tournament.rules,
        "entrants": [entrant_row(e) for e in tournament.entrants],
        "standings": standing_rows(reply.standings),
        "tables": [table_row(t, tournament.tournament_id) for t in reply.tables],
        "tables_page": tables_page,
        "tables_next": reply.next_table_page_token,
        "away": [away_text(a) for a in reply.away],
    }
