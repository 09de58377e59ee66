"""``ohell play``: a series of in-process games between bots, seats rotated. A seat is a built-in
bot (``heuristic``) or a local bot file (``path/to/mybot.py:MyBot``), which is played through the
wire as on the platform (``arena.sdk.local.WireSeat``) and offered 000's bid changes when it asks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.rpc.files import write_named_file
from arena.sdk.local import WireSeat, is_local_spec, load_bot, unknown_bot
from arena.sdk.session import Session
from arena.wire import given_rules
from ohell.bots import BOT_FACTORIES, make_bot
from ohell.errors import OhHellError
from ohell.match import play_game
from ohell.observation import observe
from ohell.record import build_record
from ohell.rules import Rules
from ohell.state import Game, State
from ohell.tally import SeriesTally

SeatMaker = Callable[[int, Rules, int], Any]  # (seed, rules, seat) -> a player


def series_setup(preset_name: str, options: Sequence[str], names: Sequence[str]) -> tuple[Rules, dict[str, SeatMaker]]:
    """``ohell play``'s ``--rules``, ``--option`` and ``--bots`` as rules and a seat maker per bot,
    checked before any game: OhHellError naming the flag for bad rules, an unknown bot, a bot file
    that does not load, or a seat count the rules cannot deal."""
    rules = given_rules(preset_name, options, table=(len(names), f"--bots gives {len(names)} seats"))
    return rules, {name: seat_maker(name) for name in names}


def seat_maker(name: str, timings: list[float] | None = None) -> SeatMaker:
    """How to seat ``name`` (a built-in bot or a bot file) for one game."""
    if is_local_spec(name):
        factory = load_bot(name)

        def local(seed: int, rules: Rules, seat: int) -> WireSeat:
            try:
                bot = factory()
            except Exception as error:
                raise OhHellError(f"{name}: creating the bot failed: {type(error).__name__}: {error}") from None
            return WireSeat(bot, rules, seat, Session(bot, timings))

        return local
    if name not in BOT_FACTORIES:
        raise unknown_bot(name)
    return lambda seed, rules, seat: make_bot(name, seed)


def display_name(name: str) -> str:
    """``heuristic`` stays; ``bots/mybot.py:MyBot`` shows as ``MyBot (mybot.py)``."""
    if not is_local_spec(name):
        return name
    path, _, cls = name.partition(":")
    return f"{cls} ({Path(path).name})" if cls else Path(path).name


def play_local_game(game: Game, players: Sequence[Any], seed: int) -> State:
    """``ohell.match.play_game``, plus 000's bid-change offer to each WireSeat that asks for it."""

    def offer_change(state: State, seat: int) -> None:
        player = players[seat]
        if isinstance(player, WireSeat) and player.wants_changes and state.change_options(seat):
            tricks = player.change_bid(observe(state, seat), state.change_options(seat))
            if tricks != state.bids[seat]:
                state.change_bid(seat, tricks)

    state = play_game(game, players, seed, offer_change)
    for player in players:
        if isinstance(player, WireSeat):
            player.finish()
    return state


def play_series(
    rules: Rules,
    bot_names: list[str],
    games: int,
    seed: int,
    out_dir: Path | None = None,
    on_game: Callable[[int], None] | None = None,
    on_seats: Callable[[list[Any], list[str]], None] | None = None,
    makers: dict[str, SeatMaker] | None = None,
) -> SeriesTally:
    """Play ``games`` games; in game ``g`` the bot list is rotated by ``g`` seats so every bot
    sits in every seat equally often. Game ``g`` uses seed ``seed + g``. ``on_seats`` sees each
    game's players after it; ``makers`` overrides how a name is seated."""
    game = Game(rules, len(bot_names))
    makers = dict(makers or {})
    for name in bot_names:
        if name not in makers:
            makers[name] = seat_maker(name)
    tally = SeriesTally()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for index in range(games):
        shift = index % len(bot_names)
        seated = bot_names[shift:] + bot_names[:shift]
        game_seed = seed + index
        players = [makers[name](game_seed * 16 + seat, rules, seat) for seat, name in enumerate(seated)]
        state = play_local_game(game, players, game_seed)
        shown = [display_name(name) for name in seated]
        tally.add_game(state, shown)
        if on_seats is not None:
            on_seats(players, seated)
        if out_dir is not None:
            seats = [{"name": name, "kind": "builtin" if name in BOT_FACTORIES else "local"} for name in shown]
            record = build_record(state, seats, seed=game_seed, match_id=f"local-{game_seed}")
            write_named_file(out_dir / f"game-{game_seed}.json", json.dumps(record, indent=1))
        if on_game is not None:
            on_game(index + 1)
    return tally
