"""Creating a tournament in Redis: its entrants checked, every deal set drawn now (secretly) and
sent ahead in parts, then one script that stores it. ``TournamentStore`` creates through this."""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis

from arena.clock import now_ms
from arena.keys import AGENT_ID, Keys
from arena.tournament.deals import draw_deal_set
from arena.tournament.model import (
    TablePlan,
    Tournament,
    TournamentAborted,
    TournamentExists,
    TournamentNotFound,
    table_id,
)
from ohell.state import Game

SEND_BYTES = 256 * 1024  # deal sets sent in one command while a tournament is created (a table's at least)
STAGED_DEALS_TTL_S = 3600  # deal sets sent for a tournament whose creation then died are dropped after this

CONNECTED_TAKES_AN_ID = (
    "connected:AGENT_ID takes the agent's id (a12, as `ohell agent list` and the host page's tokens show it),"
    " not its name"
)


def _taken(tourney_id: str) -> TournamentExists:
    return TournamentExists(f"tournament.tournament_id: a tournament {tourney_id!r} exists already")


class Creating:
    """``create`` of ``TournamentStore`` (a base of it: its Redis client, keys and scripts)."""

    client: redis.Redis
    keys: Keys
    _create: Any

    def _run(self, script: Any, *args: Any) -> Any:
        raise NotImplementedError

    def create(self, tourney: Tournament) -> list[TablePlan]:
        """Store the tournament, its first round and all its deal sets (drawn now, secretly)."""
        for number, entrant in enumerate(tourney.entrants):
            if entrant.kind == "connected" and not (
                AGENT_ID.fullmatch(entrant.agent_id) and self.client.exists(self.keys.agent(entrant.agent_id))
            ):
                # an entrant with no name of its own is named by its agent id, said once already
                named = f" (entrant {entrant.name!r})" if entrant.name != entrant.agent_id else ""
                # connected:alice for a registered alice said only that no agent 'alice' was registered
                hint = "" if AGENT_ID.fullmatch(entrant.agent_id) else f": {CONNECTED_TAKES_AN_ID}"
                raise TournamentNotFound(
                    f"tournament.entrants[{number}].agent_id: no registered agent {entrant.agent_id!r}{named}{hint}"
                )
        if self.client.sismember(self.keys.tourneys, tourney.tourney_id):  # not after seconds of drawing
            raise _taken(tourney.tourney_id)  # and megabytes sent (the script checks again: two at once)
        rules = tourney.rules()
        plans = [TablePlan(table_id(1, i), 1, table) for i, table in enumerate(tourney.first_round())]
        deals = {plan.table_id: self._draw(Game(rules, len(plan.entrants)), tourney.deals) for plan in plans}
        for number in range(2, tourney.rounds + 1):
            for index, size in enumerate(tourney.round_sizes()):
                deals[table_id(number, index)] = self._draw(Game(rules, size), tourney.deals)
        nonce = self._send_deals(tourney.tourney_id, deals)
        created = self._run(
            self._create,
            tourney.tourney_id,
            tourney.to_json(),
            now_ms(),
            json.dumps({plan.table_id: plan.to_json() for plan in plans}),
            nonce,
            tourney.summary().to_json(),
        )
        if created == -1:
            raise TournamentAborted(
                f"tournament.tournament_id: the deal sets of {tourney.tourney_id!r} were lost before it was created"
                f" (more than {STAGED_DEALS_TTL_S} s to send them, or Redis short of memory dropped them);"
                " create it again"
            )
        if not created:
            raise _taken(tourney.tourney_id)
        return plans

    def _send_deals(self, tourney_id: str, deals: dict[str, str]) -> str:
        """Send the deal sets of a tournament being created to a hash of their own, about ``SEND_BYTES``
        a command, and return its nonce. The script that creates the tournament renames it into place:
        one script holding every deal set (up to ~50 MB of JSON to decode) would keep Redis from every
        other client, the live matches' relays included, for a second."""
        nonce = uuid.uuid4().hex
        staged = self.keys.tourney_deals_new(tourney_id, nonce)
        part: dict[Any, Any] = {}  # table id -> its deal sets (redis-py types its mappings narrowly)
        size = 0
        for number, (table, sets) in enumerate(deals.items(), start=1):
            part[table] = sets
            size += len(sets)
            if size >= SEND_BYTES or number == len(deals):
                pipe = self.client.pipeline(transaction=False)
                pipe.hset(staged, mapping=part)
                pipe.expire(staged, STAGED_DEALS_TTL_S)
                pipe.execute()
                part, size = {}, 0
        return nonce

    @staticmethod
    def _draw(game: Game, count: int) -> str:
        return json.dumps([draw_deal_set(game).to_dict() for _ in range(count)])
