"""``ohell play``: a series of in-process games between built-in bots, seats rotated."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ohell.bots import make_bot
from ohell.match import play_game
from ohell.record import build_record
from ohell.rules import Rules
from ohell.state import Game
from ohell.tally import SeriesTally


def play_series(
    rules: Rules,
    bot_names: list[str],
    games: int,
    seed: int,
    out_dir: Path | None = None,
    on_game: Callable[[int], None] | None = None,
) -> SeriesTally:
    """Play ``games`` games; in game ``g`` the bot list is rotated by ``g`` seats so every bot
    sits in every seat equally often. Game ``g`` uses seed ``seed + g``."""
    game = Game(rules, len(bot_names))
    tally = SeriesTally()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for index in range(games):
        shift = index % len(bot_names)
        seated = bot_names[shift:] + bot_names[:shift]
        game_seed = seed + index
        bots = [make_bot(name, game_seed * 16 + seat) for seat, name in enumerate(seated)]
        state = play_game(game, bots, game_seed)
        tally.add_game(state, seated)
        if out_dir is not None:
            seats = [{"name": name, "kind": "builtin"} for name in seated]
            record = build_record(state, seats, seed=game_seed, match_id=f"local-{game_seed}")
            (out_dir / f"game-{game_seed}.json").write_text(json.dumps(record, indent=1))
        if on_game is not None:
            on_game(index + 1)
    return tally
