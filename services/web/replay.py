"""A finished match's record (docs/record.md) as the frames of the replay viewer: one frame per
step (a deal, a bid, a card, a trick won, a hand's scores, the end), each the whole table as it
stands then, so the page only draws frame ``i``. Every card shown is public once the match ended."""

from __future__ import annotations

from typing import Any

Frame = dict[str, Any]


def _caption_bid(kind: str, name: str, value: int) -> str:
    verb = {"bid": "bids", "change": "changes the bid to", "rebid": "rebids"}.get(kind, kind)
    return f"{name} {verb} {value}"


class _Table:
    """The running state of the table while the record is walked."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.names = [seat.get("name", f"seat {i}") for i, seat in enumerate(record["seats"])]
        self.seats = len(self.names)
        self.totals = [0] * self.seats
        self.frames: list[Frame] = []
        self.hand: dict[str, Any] = {}
        self.held: list[list[str]] = []
        self.bids: list[int | None] = []
        self.won: list[int] = []
        self.trick: list[dict[str, Any]] = []
        self.trick_winner: int | None = None
        self.points: list[int] | None = None

    def start_hand(self, hand: dict[str, Any]) -> None:
        self.hand = hand
        self.held = [list(cards) for cards in hand["deal"]]
        self.bids = [None] * self.seats
        self.won = [0] * self.seats
        self.trick, self.trick_winner, self.points = [], None, None

    def snap(self, caption: str, acting: int | None = None) -> None:
        hand = self.hand
        self.frames.append(
            {
                "hand": hand.get("number", 0),
                "size": hand.get("size", 0),
                "dealer": hand.get("dealer"),
                "trump": hand.get("trump"),
                "sudden_death": hand.get("sudden_death", False),
                "held": [list(cards) for cards in self.held],
                "bids": list(self.bids),
                "won": list(self.won),
                "trick": list(self.trick),
                "trick_winner": self.trick_winner,
                "points": self.points,
                "totals": list(self.totals),
                "acting": acting,
                "caption": caption,
            }
        )


def frames(record: dict[str, Any]) -> list[Frame]:
    table = _Table(record)
    names = table.names
    for hand in record["hands"]:
        table.start_hand(hand)
        trump = hand.get("trump") or "none"
        kind = "sudden-death hand" if hand.get("sudden_death") else "hand"
        table.snap(f"{kind} {hand['number']}: {hand['size']} cards each, {names[hand['dealer']]} deals, trump {trump}")
        tricks = iter(hand.get("tricks", []))
        current = next(tricks, None)
        for event_kind, seat, value in hand["events"]:
            if event_kind != "play":
                table.bids[seat] = value
                table.snap(_caption_bid(event_kind, names[seat], value), seat)
                continue
            if table.trick_winner is not None:  # the previous trick leaves the table
                table.trick, table.trick_winner = [], None
            table.held[seat].remove(value)
            table.trick.append({"seat": seat, "card": value})
            table.snap(f"{names[seat]} plays {value}", seat)
            if current is not None and len(table.trick) == len(current["cards"]):
                winner = current["winner"]
                table.won[winner] += 1
                table.trick_winner = winner
                table.snap(f"{names[winner]} wins the trick", winner)
                current = next(tricks, None)
        table.trick, table.trick_winner = [], None
        table.points = list(hand["points"])
        table.totals = list(hand["totals"])
        scored = ", ".join(f"{n} {p:+d}" for n, p in zip(names, hand["points"], strict=True))
        table.snap(f"end of hand {hand['number']}: {scored}")
    winners = " and ".join(names[w] for w in record.get("winners", []))
    table.totals = list(record.get("totals", table.totals))
    table.snap(f"match over: {winners or 'no winner'} {'win' if len(record.get('winners', [])) > 1 else 'wins'}")
    return table.frames
