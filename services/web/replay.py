"""A finished match's record (docs/record.md) as the frames of the replay viewer: one frame per
step (a deal, a bid, a card, a trick won, a hand's scores, the end), each the table as it stands
then, so the page only draws frame ``i``. The cards still held are not repeated in every frame:
each hand's deal and plays are sent once, and a frame says how many of the hand's plays were made
(``held_at`` here, and the same few lines in static/replay.js). Every card shown is public once
the match ended."""

from __future__ import annotations

from typing import Any

Frame = dict[str, Any]
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_face(card: str) -> str:
    """A record's card ("TH") as the page draws it ("10♥"; static/cards.js: cardFace): captions
    read "p1 plays 10♥" next to the card on the table, not "p1 plays TH"."""
    return card[:-1].replace("T", "10") + SUITS[card[-1]]


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
        self.hand_index = -1
        self.played = 0  # plays made so far in this hand
        self.hands: list[dict[str, Any]] = []  # per hand: the deal and the plays, once
        self.bids: list[int | None] = []
        self.won: list[int] = []
        self.trick: list[tuple[int, str]] = []
        self.trick_winner: int | None = None
        self.points: list[int] | None = None

    def start_hand(self, hand: dict[str, Any]) -> None:
        self.hand = hand
        self.hand_index += 1
        self.played = 0
        plays = [[seat, card] for kind, seat, card in hand["events"] if kind == "play"]
        meta = {name: hand.get(name) for name in ("number", "size", "dealer", "trump", "sudden_death")}
        winners = [trick["winner"] for trick in hand.get("tricks", [])]
        self.hands.append({**meta, "deal": hand["deal"], "plays": plays, "winners": winners})
        self.bids = [None] * self.seats
        self.won = [0] * self.seats
        self.trick, self.trick_winner, self.points = [], None, None

    def snap(self, caption: str, acting: int | None = None) -> None:
        frame: Frame = {
            "hand_index": self.hand_index,
            "played": self.played,
            "bids": list(self.bids),
            "won": list(self.won),
            "trick": [[seat, card] for seat, card in self.trick],
            "totals": list(self.totals),
            "caption": caption,
        }
        for name, value in (("trick_winner", self.trick_winner), ("points", self.points), ("acting", acting)):
            if value is not None:  # left out when empty: a classic game has some 700 frames
                frame[name] = value
        self.frames.append(frame)


def held_at(hands: list[dict[str, Any]], frame: Frame) -> list[list[str]]:
    """The cards each seat holds at ``frame``: its deal less the plays made so far in the hand."""
    if frame["hand_index"] < 0:
        return []
    hand = hands[frame["hand_index"]]
    gone = {card for _, card in hand["plays"][: frame["played"]]}
    return [[card for card in cards if card not in gone] for cards in hand["deal"]]


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """What the viewer needs: {"hands": [{number, size, dealer, trump, sudden_death, deal, plays,
    winners (each trick's, in order)}],
    "frames": [{hand_index, played, bids, won, trick: [[seat, card]], totals, caption, and when
    set: trick_winner, points, acting}]}."""
    table = _walk(record)
    return {"hands": table.hands, "frames": table.frames}


def frames(record: dict[str, Any]) -> list[Frame]:
    return _walk(record).frames


def _walk(record: dict[str, Any]) -> _Table:
    table = _Table(record)
    names = table.names
    for hand in record["hands"]:
        table.start_hand(hand)
        trump = card_face(hand["trump"]) if hand.get("trump") else "none"
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
            table.played += 1
            table.trick.append((seat, value))
            table.snap(f"{names[seat]} plays {card_face(value)}", seat)
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
    table.points = None  # the last hand's points are its own frame's
    table.snap(f"match over: {winners or 'no winner'} {'win' if len(record.get('winners', [])) > 1 else 'wins'}")
    return table
