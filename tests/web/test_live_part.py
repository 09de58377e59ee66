"""static/live-part.js on the leaderboard page, in Chromium with the page and its live part rendered
from their templates (no stack; tests/web/test_browser.py follows a real ladder): a fresh part is
put in place without a reload, and a ladder deleted while its page is open (its part answers 404)
ends the following: the page asked for it every 2 s for as long as it stayed open."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from services.web.pages import templates

from .conftest import serve_pages

EVERY_MS = 200  # the part's data-every here: the page's own 2 s would only make the test slower


def leaderboard(name: str, games: int) -> dict[str, Any]:
    ladder = SimpleNamespace(name="class", preset="classic", seats=3, matches=games, paused=False)
    row = dict(rank=1, agent_id="a1", name="random-1", ordinal="1.00", mu="25.00", sigma="8.00", games=games,
               exact="50.0%", win_share="0.500", faults=0)  # fmt: skip
    html = templates.env.get_template(name).render(ladder=ladder, waiting=0, rows=[row], running=[], host_session=False)
    return html.replace(' data-live="', f' data-every="{EVERY_MS}" data-live="')  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_leaderboard_takes_fresh_parts_in_place_and_stops_once_the_ladder_is_gone(page: Any) -> None:
    asked: list[int] = []
    parts = [leaderboard("_leaderboard_live.html", games) for games in (1, 2)]

    def live_part(path: str) -> dict[str, Any] | None:
        if path != "/ladders/class/live":
            return None
        asked.append(1)
        if len(asked) <= len(parts):
            return {"body": parts[len(asked) - 1], "content_type": "text/html"}
        return {"status": 404, "body": "no ladder class", "content_type": "text/plain"}

    serve_pages(page, {"/ladders/class": (leaderboard("leaderboard.html", 0), "text/html")}, live_part)
    page.goto("http://web.test/ladders/class")
    page.evaluate("window.servedOnce = true")
    games = page.locator("#leaderboard tbody td:nth-child(6)")  # 0 as served
    page.wait_for_function("document.body.dataset.followed === 'gone'")
    assert games.inner_text() == "2" and page.evaluate("window.servedOnce") is True
    count = len(asked)
    time.sleep(10 * EVERY_MS / 1000)
    assert len(asked) == count == len(parts) + 1  # not asked again after the 404
