"""Plain rows for the templates from the API's messages, and the agent page's chart as inline SVG."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from arena.wire import ENTRY_OF, fixed, proto_rules_label, rules_label, win_share
from ohell.rules import Rules, RulesError

Row = dict[str, Any]


def when(ms: int) -> str:
    """A time as the pages show it: in UTC, and saying so (the server's and reader's zones differ)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000)) if ms else ""


def record_rules_label(record: dict[str, Any]) -> str:
    try:
        return rules_label(Rules.from_dict(record.get("rules", {})), record.get("preset") or "")
    except (RulesError, TypeError, ValueError):
        return record.get("preset") or "custom"


def ladder_row(ladder: Any, standings: Sequence[Any]) -> Row:
    seats = ladder.seats or 1
    return {
        "name": ladder.name,
        "preset": proto_rules_label(ladder.rules),
        "seats": ladder.seats,
        "agents": len(standings),
        "matches": sum(s.games for s in standings) // seats,
        "leader": standings[0].name if standings and standings[0].rank else "",
        "house_fill": ladder.house_fill,
        "paused": ladder.paused,
        "open_entry": ENTRY_OF.get(ladder.entry) == "open",
    }


def standing_row(s: Any) -> Row:
    return {
        "rank": s.rank or "",
        "agent_id": s.agent_id,
        "name": s.name,
        "ordinal": fixed(s.ordinal, 2),
        "mu": fixed(s.mu, 2),
        "sigma": fixed(s.sigma, 2),
        "games": s.games,
        "exact": f"{100 * s.exact_bid_rate:.1f}%",
        "win_share": win_share(s.wins, s.games),
        "faults": s.faults,
        "forfeits": s.forfeits,
    }


def revoked_rows(agents: Sequence[Any]) -> list[Row]:
    """The host page's revoked agents: ``since`` is empty when the matchmaker did not record when."""
    return [{"agent_id": a.agent_id, "name": a.name, "since": when(a.revoked_ms)} for a in agents if a.revoked]


def record_seats(record: dict[str, Any], agent_ids: Sequence[str]) -> list[Row]:
    winners = set(record.get("winners", []))
    totals = record.get("totals", [])
    return [
        {
            "seat": i,
            "name": seat.get("name", f"seat {i}"),
            "agent_id": seat.get("agent_id") or (agent_ids[i] if i < len(agent_ids) else ""),
            "total": totals[i] if i < len(totals) else "",
            "winner": i in winners,
        }
        for i, seat in enumerate(record["seats"])
    ]


def match_row(summary: Any, names: dict[str, str], agent_id: str = "") -> Row:
    """A match of a list from its summary: seats with final scores and winners once finished, the
    place of ``agent_id`` in it, the faults of all seats."""
    seats = [{"agent_id": a, "name": names.get(a, a), "total": "", "winner": False} for a in summary.agent_ids]
    for i, seat in enumerate(seats):
        if i < len(summary.totals):
            seat["total"], seat["winner"] = summary.totals[i], i in summary.winners
    mine = next((s for s in seats if s["agent_id"] == agent_id), None)
    place = None
    if mine is not None and isinstance(mine["total"], int):
        place = 1 + sum(1 for s in seats if isinstance(s["total"], int) and s["total"] > mine["total"])
    return {
        "match_id": summary.match_id,
        "ladder": summary.ladder,
        "state": summary.state,
        "seats": seats,
        "finished": when(summary.finished_ms),
        "created": when(summary.created_ms),
        "score": mine["total"] if mine else None,
        "place": place,
        "faults": sum(summary.faults) if summary.state == "finished" else "",
    }


# The scale's largest font size in the chart's own units: style.css's on a phone, where the chart is
# drawn at about 0.6 of its width (12 px on a 390 px screen); its digits are at most 0.6 of that wide.
SCALE_FONT = 20


def _svg(series: list[float], band: list[tuple[float, float]] | None, title: str) -> Markup:
    """A line of ``series`` over its ``band``, with a scale on the left: the top, middle and bottom
    values to 2 decimals, each with a grid line; the scale's margin as wide as its longest value."""
    values = series + [v for pair in band or [] for v in pair]
    low, high = min(values), max(values)
    ticks = (high, (high + low) / 2, low) if high != low else (high,)
    widest = max(len(fixed(tick, 2)) for tick in ticks)
    width, height, left, pad = 600, 180, 12 + round(0.6 * SCALE_FONT * widest), 14
    span = (high - low) or 1.0
    step = (width - left - pad) / max(len(series) - 1, 1)

    def y(v: float) -> float:
        return height - pad - (v - low) / span * (height - 2 * pad)

    def xy(i: int, v: float) -> str:
        return f"{left + i * step:.1f},{y(v):.1f}"

    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{title}">']
    for tick in ticks:
        parts.append(f'<line class="grid" x1="{left}" x2="{width - pad}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>')
        parts.append(f'<text class="scale" x="{left - 6}" y="{y(tick) + 4:.1f}">{fixed(tick, 2)}</text>')
    if band:
        outline = [xy(i, hi) for i, (_, hi) in enumerate(band)] + [
            xy(i, lo) for i, (lo, _) in reversed(list(enumerate(band)))
        ]
        parts.append(f'<polygon class="band" points="{" ".join(outline)}"/>')
    parts.append(f'<polyline class="line" points="{" ".join(xy(i, v) for i, v in enumerate(series))}"/>')
    for i, v in enumerate(series):
        cx, cy = xy(i, v).split(",")
        parts.append(f'<circle cx="{cx}" cy="{cy}" r="2.5"><title>{fixed(v, 2)}</title></circle>')
    parts.append("</svg>")
    return Markup("".join(parts))


CHART_POINTS = 300  # a long history is drawn from this many evenly spaced points (the last one always)


def rating_chart(points: Sequence[Any]) -> Markup | None:
    """The rating (mu) after each rated match with the mu ± sigma band, from ``GetRatingHistory``'s
    points (oldest first); None without points."""
    if not points:
        return None
    step = max(1, -(-len(points) // CHART_POINTS))
    shown = list(points[::step])
    if shown[-1] is not points[-1]:
        shown.append(points[-1])
    mus = [p.mu_after for p in shown]
    band = [(p.mu_after - p.sigma_after, p.mu_after + p.sigma_after) for p in shown]
    what = f"Rating (mu) after each of {len(points)} rated matches, oldest on the left"
    caption = f"{what}; the shaded band is mu ± sigma (how sure the rating is). Scale: mu, to 2 decimals."
    if len(shown) < len(points):
        caption += f" Drawn from {len(shown)} evenly spaced matches of them, the latest included."
    return _svg(mus, band, what + ", band mu ± sigma") + Markup("<figcaption>{}</figcaption>").format(caption)
