"""Typed errors of the engine. Each carries the offending input so callers can report it."""

from __future__ import annotations


class OhHellError(ValueError):
    """Base class of every error the engine raises on bad input."""


class RulesError(OhHellError):
    """A rule option with a value the engine does not support."""


class IllegalActionError(OhHellError):
    """An action that the rules do not allow in the current state.

    ``seat`` is who tried, ``action`` what they tried (bid count or card, as text), ``reason``
    why it is illegal, phrased for a person.
    """

    def __init__(self, seat: int, action: str, reason: str) -> None:
        self.seat = seat
        self.action = action
        self.reason = reason
        super().__init__(f"seat {seat} cannot {action}: {reason}")


class ChanceError(OhHellError):
    """A deal or cut that is not a valid outcome (duplicate cards, wrong count, wrong phase)."""
