"""A ladder's changeable settings as words, shared by ``ohell ladder update`` and the host page's
edit form, which both say what an update changed."""

from __future__ import annotations

from typing import Any

from arena.wire import ENTRY_OF, proto_rules_label

ENTRY_TEXT = {
    "host": "host (only agents the host registered queue)",
    "open": "open (agents may register themselves without a token, and queue here)",
}


def entry_text(ladder: Any) -> str:
    """Who may queue, in a word (a LadderEntry of a newer platform: its number)."""
    return ENTRY_OF.get(ladder.entry, str(ladder.entry))


def settings_text(ladder: Any) -> dict[str, str]:
    """What ``ladder update`` may change, as it says each setting."""
    entry = entry_text(ladder)
    bots = ", ".join(ladder.house_bots) or "none"
    if ladder.house_bots and not ladder.house_fill:
        bots += " (not filling tables: house_fill off)"
    return {
        "rules": proto_rules_label(ladder.rules),
        "seats": str(ladder.seats),
        "house bots": bots,
        "fill after": f"{ladder.fill_after_seconds:g} s",
        "entry": ENTRY_TEXT.get(entry, entry),
        "base window": f"{ladder.base_window:g}",
        "widen per second": f"{ladder.widen_per_second:g}",
    }


def changes(before: Any, after: Any) -> list[str]:
    """Each setting that differs, as 'setting: was -> now'."""
    was, now = settings_text(before), settings_text(after)
    return [f"{setting}: {was[setting]} -> {now[setting]}" for setting in was if now[setting] != was[setting]]
