"""Built-in bots, by name. Each is constructed with a seed and is deterministic for it."""

from __future__ import annotations

from collections.abc import Callable

from ohell.bots.base import Bot
from ohell.bots.heuristic import HeuristicBot
from ohell.bots.random_bot import RandomBot
from ohell.bots.strong import StrongBot

BOT_FACTORIES: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "strong": StrongBot,
}


def make_bot(name: str, seed: int = 0) -> Bot:
    try:
        factory = BOT_FACTORIES[name]
    except KeyError:
        known = ", ".join(sorted(BOT_FACTORIES))
        raise ValueError(f"unknown bot {name!r}; built-in bots: {known}") from None
    return factory(seed)


__all__ = ["BOT_FACTORIES", "Bot", "make_bot"]
