"""``ohell match show``: a finished match, readable in a terminal, hand by hand (tricks optional)."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.table import Table


def when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) if ms else ""


def print_match(console: Console, summary: Any, record: dict[str, Any], tricks: bool) -> None:
    names = [seat.get("name", f"seat {i}") for i, seat in enumerate(record["seats"])]
    winners = " and ".join(names[w] for w in record.get("winners", []))
    console.print(
        f"match {summary.match_id} on {summary.ladder}: {summary.state} {when(summary.finished_ms)} UTC; "
        f"{len(record['hands'])} hands; {winners or 'no winner'} won"
    )
    out = Table(title="hand by hand: bid / tricks won / points (running total)")
    for column in ("hand", "dealer", "trump", *names):
        out.add_column(column, justify="left" if column in ("dealer", "trump") else "right")
    for hand in record["hands"]:
        cells = []
        for seat in range(len(names)):
            bid = hand["bids"][seat]
            cells.append(
                "-"
                if bid < 0
                else f"{bid}/{hand['tricks_won'][seat]} {hand['points'][seat]:+d} ({hand['totals'][seat]})"
            )
        label = f"{hand['number']}{' sd' if hand.get('sudden_death') else ''}"
        out.add_row(label, names[hand["dealer"]], hand.get("trump") or "-", *cells)
    out.add_row("total", "", "", *(str(t) for t in record.get("totals", [])))
    console.print(out)
    if tricks:
        for hand in record["hands"]:
            console.print(f"hand {hand['number']} (trump {hand.get('trump') or 'none'}):")
            for number, trick in enumerate(hand.get("tricks", []), 1):
                leader, cards = trick["leader"], trick["cards"]
                played = ", ".join(f"{names[(leader + i) % len(names)]} {card}" for i, card in enumerate(cards))
                console.print(f"  trick {number}: {played} -> {names[trick['winner']]}")
    for fault in record.get("faults", []):
        console.print(
            f"fault: {names[fault['seat']]} in hand {fault['hand']}: {fault['kind']} {fault.get('detail', '')}"
        )
