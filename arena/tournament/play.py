"""Play the games of one tournament table: every deal set once per seat rotation.

Built-in seats are played in this process (``ohell.match.play_game`` with the dealt cards);
a table with connected or endpoint agents goes through the match host, which is given the same
dealt cards. The records keep the deals, so they stay server-side until the tournament ends.

Common random numbers: duplicate play fixes every chance outcome, the bots' own randomness
included. The built-in bot holding seat ``s`` of deal set ``k`` is seeded from that deal set
(secret until the tournament ends) and ``s`` alone (``hand_seeds``), so whoever holds those
cards in any rotation decides with the same random stream (the random bot's choices, the strong
bot's sampled deals). A game replayed after a crash plays the same (a first rotation an agent
saw is redealt first: ``arena.tournament.jobs.unseen_deals``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from typing import Any

from arena.keys import DEFAULT_REDIS_URL
from arena.play.specs import SeatSpec, all_builtin
from arena.tournament.deals import DealSet, ScriptedChance, seating
from ohell.bots import make_bot
from ohell.match import play_game
from ohell.record import build_record
from ohell.rules import Rules
from ohell.state import Game


def game_id(table_id: str, deal: int, turn: int) -> str:
    return f"{table_id}/d{deal}/r{turn}"


def table_games(table_id: str, deals: int, seats: int) -> list[str]:
    """The game ids of a table: each deal set once per rotation."""
    return [game_id(table_id, deal, turn) for deal in range(deals) for turn in range(seats)]


def hand_seeds(unit: str, deal_set: DealSet, seats: int) -> list[int]:
    """The built-in bots' seed for each seat of deal set ``unit`` ("<table>/d<k>"): the same in
    every rotation of that deal set, unpredictable while its cards are."""
    secret = hashlib.sha256(f"{unit}:{deal_set.to_json()}".encode()).digest()
    return [int.from_bytes(hashlib.sha256(secret + bytes([seat])).digest()[:6], "big") for seat in range(seats)]


def play_builtin_game(
    game: str, rules: Rules, seats: Sequence[SeatSpec], deal_set: DealSet, seeds: Sequence[int]
) -> dict[str, Any]:
    """One game with the dealt cards; ``seeds[s]`` seeds the bot in seat ``s``."""
    bots = [make_bot(seat.bot, seed) for seat, seed in zip(seats, seeds, strict=True)]
    state = play_game(Game(rules, len(seats)), bots, seeds[0], chance=ScriptedChance(deal_set))
    return build_record(state, [seat.record_entry() for seat in seats], match_id=game)


def play_remote_game(
    game: str, rules: Rules, seats: Sequence[SeatSpec], deal_set: DealSet, seeds: Sequence[int]
) -> dict[str, Any]:
    from arena.play.host import host_match_sync  # grpc is loaded only where remote tables are hosted

    redis_url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    return host_match_sync(
        game,
        rules,
        seats,
        seeds[0],
        redis_url=redis_url,
        chance=ScriptedChance(deal_set),
        spectate=False,
        bot_seeds=seeds,
    )


def play_table_games(
    table_id: str,
    rules: Rules,
    entrants: Sequence[SeatSpec],
    deal_sets: Sequence[DealSet],
    done: Callable[[str], bool] = lambda game: False,
    record: Callable[[str, dict[str, Any]], None] = lambda game, rec: None,
    tourney_id: str = "",
    lineup: Callable[[], Sequence[SeatSpec]] | None = None,
    showing: Callable[[int], None] = lambda deal: None,
) -> None:
    """Play every (deal set, rotation) of a table whose game ``done`` does not report finished,
    handing each record to ``record`` as soon as it is played (a resumed table skips those). A
    game's match id is ``<tourney_id>/<game id>``: agents and gateways tell an agent's games apart
    by match id, and every tournament has a table r1t0. ``lineup``, asked before each game played,
    says who plays the entrants' places in it (default: ``entrants``). ``showing(deal)`` is called
    before a game of deal set ``deal``'s first rotation with an agent seated (not only built-in bots)
    shows its cards."""
    for deal, deal_set in enumerate(deal_sets):
        seeds = hand_seeds(f"{table_id}/d{deal}", deal_set, len(entrants))
        for turn in range(len(entrants)):
            game = game_id(table_id, deal, turn)
            if done(game):
                continue
            seats = seating(lineup() if lineup is not None else entrants, deal, turn)
            play = play_builtin_game if all_builtin(seats) else play_remote_game
            if turn == 0 and play is play_remote_game:
                showing(deal)
            match_id = f"{tourney_id}/{game}" if tourney_id else game
            record(game, play(match_id, rules, seats, deal_set, seeds))
