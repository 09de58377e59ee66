"""A bot from a local Python file, played in this process exactly as the platform would play it.

``load_bot("path/to/mybot.py:MyBot")`` imports the file and returns a factory of bots.
``WireSeat`` seats such a bot at an in-process game: every observation goes to the wire and back
(``ohell.v1.DecisionRequest`` -> the SDK's ``Session``), so the bot sees exactly the
``Observation`` a remote agent gets, and its exceptions and illegal answers are handled as on
the platform: counted, and the default action played.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.proto.ohell.v1 import match_pb2
from arena.sdk.session import BOT_METHODS, Session, missing_bot_methods, wants_bid_changes
from arena.wire import action_number, add_legal_cards, observation_to_proto, rules_to_proto
from ohell.bots import BOT_FACTORIES, make_bot
from ohell.errors import OhHellError
from ohell.observation import Observation
from ohell.rules import Rules
from ohell.state import BID_BASE

LOCAL_MATCH = "local"


def is_local_spec(name: str) -> bool:
    """Whether ``name`` names a bot file (``path.py`` or ``path.py:Class``) rather than a built-in."""
    return name.partition(":")[0].endswith(".py")


def unknown_bot(name: str) -> OhHellError:
    known = ", ".join(sorted(BOT_FACTORIES))
    return OhHellError(f"unknown bot {name!r}; built-in bots: {known}, or a bot file: path/to/mybot.py:MyBot")


def bot_from_spec(spec: str, seed: int = 0) -> Any:
    """One bot for play over the network: a bot file's class (``path/to/mybot.py:MyBot``), made
    once, or a built-in bot seeded with ``seed``. OhHellError when it cannot."""
    if is_local_spec(spec):
        factory = load_bot(spec)
        try:
            return factory()
        except Exception as error:
            raise OhHellError(f"{spec}: creating the bot failed: {type(error).__name__}: {error}") from None
    if spec not in BOT_FACTORIES:
        raise unknown_bot(spec)
    return make_bot(spec, seed)


def load_bot(spec: str) -> Callable[[], Any]:
    """A factory of the bot class named by ``path/to/file.py[:ClassName]`` (without a class name:
    the one class in the file that defines ``bid`` and ``play``). OhHellError when it cannot."""
    path_text, _, class_name = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise OhHellError(f"bot file {path_text!r} does not exist")
    module_name = f"ohell_local_bot_{abs(hash(str(path.resolve())))}"
    module = sys.modules.get(module_name)
    if module is None:
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise OhHellError(f"cannot import {path_text!r} as Python")
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(path.resolve().parent))  # the bot may import its neighbours
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            raise OhHellError(f"importing {path_text} failed: {type(error).__name__}: {error}") from None
        finally:
            sys.path.remove(str(path.resolve().parent))
        sys.modules[module_name] = module
    classes = {
        name: value
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module_name
    }
    candidates = {name: value for name, value in classes.items() if not missing_bot_methods(value)}
    if class_name:
        if class_name in classes and class_name not in candidates:
            missing = " and ".join(BOT_METHODS[name] for name in missing_bot_methods(classes[class_name]))
            raise OhHellError(f"{path_text}:{class_name} is not a bot class: it does not define {missing}")
        if class_name not in candidates:
            raise OhHellError(
                f"{path_text} has no bot class {class_name!r} (bot classes there: {', '.join(candidates) or 'none'})"
            )
        return candidates[class_name]  # type: ignore[no-any-return]
    if not candidates:  # "name the bot class ... (bot classes there: none)" asked for a name there is none of
        needed = " and ".join(BOT_METHODS.values())
        raise OhHellError(f"{path_text} defines no bot class (a class with {needed})")
    if len(candidates) != 1:
        raise OhHellError(f"name the bot class: {path_text}:ClassName (bot classes there: {', '.join(candidates)})")
    return next(iter(candidates.values()))  # type: ignore[no-any-return]


class WireSeat:
    """A local bot in a seat of an in-process game (``bid``/``play`` like a built-in bot)."""

    def __init__(self, bot: Any, rules: Rules, seat: int, session: Session | None = None) -> None:
        self.name = getattr(bot, "name", type(bot).__name__)
        self.session = session or Session(bot)
        self.seat = seat
        self.decisions = 0
        self.wants_changes = wants_bid_changes(bot) and rules.bid_changes
        started = match_pb2.MatchStarted(match_id=LOCAL_MATCH, seat=seat, rules=rules_to_proto(rules))
        self.session.handle(match_pb2.AgentEvent(match_started=started))

    def bid(self, observation: Observation) -> int:
        return self.ask(match_pb2.DECISION_KIND_BID, observation, observation.legal_actions) - BID_BASE

    def play(self, observation: Observation) -> int:
        return self.ask(match_pb2.DECISION_KIND_PLAY, observation, observation.legal_actions)

    def change_bid(self, observation: Observation, options: list[int]) -> int:
        """The bid after a change offer (``options``: the bids it may change to, its own among them)."""
        return self.ask(match_pb2.DECISION_KIND_CHANGE_BID, observation, [BID_BASE + t for t in options]) - BID_BASE

    def ask(self, kind: int, observation: Observation, legal: Any) -> int:
        self.decisions += 1
        request = match_pb2.DecisionRequest(match_id=LOCAL_MATCH, seat=self.seat, decision_id=self.decisions, kind=kind)  # type: ignore[arg-type]
        observation_to_proto(observation, 0, request.observation)
        if kind == match_pb2.DECISION_KIND_PLAY:
            add_legal_cards(request, legal)
        else:
            request.legal_bids.extend([action - BID_BASE for action in legal])
        action = self.session.decide(request)
        number = action_number(action, kind)
        return number if number in legal else min(legal)  # illegal: counted by the session, default played

    def finish(self) -> None:
        ended = match_pb2.MatchEnded(match_id=LOCAL_MATCH)
        self.session.handle(match_pb2.AgentEvent(match_ended=ended))


__all__ = ["LOCAL_MATCH", "WireSeat", "is_local_spec", "load_bot"]
