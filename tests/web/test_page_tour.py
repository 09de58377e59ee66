"""Every page of the web app, visited as a visitor and as the host at 1280 and 390 px wide: what
each must be to be usable (one h1 naming it, a title, no sideways page scroll on a phone, a label
for every field, every link and button reachable by Tab with a visible focus ring, times with their
time zone) and the links that lead from an agent to its matches, a replay and back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena.proto.ohell.v1 import matchmaker_pb2 as pb

from .conftest import HOST_TOKEN, LADDER, Site, screenshot, wait_until

pytestmark = pytest.mark.slow  # starts the whole stack, the web app and Chromium

# what is wrong with the page in the tab, one line each ([] when nothing)
AUDIT = """() => {
  const faults = [];
  const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const h1 = [...document.querySelectorAll("h1")];
  if (h1.length !== 1) faults.push(`${h1.length} h1 elements`);
  if (!document.title.trim() || document.title.trim() === "· ohell arena") faults.push("no title");
  for (const field of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
    const named = (field.labels && field.labels.length) || field.getAttribute("aria-label");
    if (!named) faults.push(`unlabelled ${field.tagName.toLowerCase()} ${field.name || field.id}`);
  }
  for (const el of document.querySelectorAll("a[href], button, input, select, textarea, summary")) {
    if (visible(el) && el.tabIndex < 0) faults.push(`not reachable by Tab: ${el.outerHTML.slice(0, 60)}`);
  }
  const stamp = /\\b\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d(?::\\d\\d)?(?![:\\d])(?! ?UTC)/;
  const current = document.querySelectorAll("header nav a[aria-current]");
  if (current.length !== 1) faults.push(`${current.length} menu links marked as the page's section`);
  for (const th of document.querySelectorAll("th")) {
    if (!th.textContent.trim()) faults.push("a column without a heading");
  }
  const text = document.body.innerText;
  const found = text.match(stamp);
  if (found) faults.push(`a time without its zone: ${found[0]}`);
  return faults;
}"""

# the seats of a match list whose final score wrapped onto the line after the name (at 390 px a
# score stood alone at the start of the next line, next to the following seat's name)
SPLIT_SCORES = """() => [...document.querySelectorAll("#matches td a[href^='/agents/']")].filter((a) => {
  const score = a.nextSibling;
  if (!score || score.nodeType !== Node.TEXT_NODE || !/\\d/.test(score.textContent)) return false;
  const range = document.createRange();
  range.setStart(score, 0);
  range.setEnd(score, score.textContent.search(/\\d/) + 1);
  const name = [...a.getClientRects()].pop(), digit = [...range.getClientRects()].pop();
  return Math.abs(name.top - digit.top) > 2;
}).map((a) => a.textContent)"""


def audit(tab: Any, name: str) -> None:
    for width in (1280, 390):
        tab.set_viewport_size({"width": width, "height": 900})
        faults = tab.evaluate(AUDIT)
        assert faults == [], f"{name} at {width} px: {faults}"
    screenshot(tab, name)  # and no page wider than the window at either width


def focus_ring(tab: Any, selector: str) -> float:
    """The width in px of the outline drawn round ``selector`` once Tab has moved the focus onto it
    (0 when none is drawn)."""
    tab.evaluate("() => document.activeElement?.blur()")
    for _ in range(60):
        tab.keyboard.press("Tab")
        if tab.evaluate("s => document.activeElement?.matches(s)", selector):
            style, width = tab.evaluate(
                "() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]; }"
            )
            return 0.0 if style == "none" else float(width.removesuffix("px"))
    raise AssertionError(f"Tab never reached {selector}")


def fits_a_phone(page: Any) -> None:
    """On a 390 x 844 px screen the replay as opened (not scrolled) shows its buttons and its whole
    table, every seat's cards: one seat a row, the fourth seat was below the screen's edge."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate("() => window.scrollTo(0, 0)")
    bottom = page.evaluate("() => document.getElementById('seats').getBoundingClientRect().bottom")
    assert bottom <= 844, f"the replay's table ends {bottom:.0f} px down a 844 px screen"
    page.set_viewport_size({"width": 1280, "height": 900})


def test_a_replay_lists_each_trick_with_its_winner(site: Site, page: Any) -> None:
    """Each trick of the hand is listed, card by card in the order played, with who won it, and the
    winner's seat says so in words: the page showed only the trick on the table, and who had won it
    by its seat's green border alone; empty tables said nothing."""
    match = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=1)).matches[0]
    record = json.loads(site.stub.GetMatch(pb.GetMatchRequest(match_id=match.match_id)).record_json)
    page.goto(f"{site.url}/matches/{match.match_id}")
    assert page.locator("#no-scores").is_visible() and page.locator("#no-tricks").is_visible()
    names = [seat["name"] for seat in record["seats"]]
    hand = record["hands"][0]
    caption = page.locator("#caption")
    for number, trick in enumerate(hand["tricks"], start=1):
        while not caption.inner_text().endswith("wins the trick"):
            page.keyboard.press("ArrowRight")
        winner = names[trick["winner"]]
        assert caption.inner_text() == f"{winner} wins the trick"
        tricks = page.locator("#tricks li")
        assert tricks.count() == number
        assert tricks.last.locator(".c").count() == len(names)
        assert tricks.last.locator(".trick-winner").inner_text() == f"→ {winner} wins"
        said = page.locator(f"#seats .seat[data-seat='{trick['winner']}'] .doing").inner_text()
        assert said == "wins the trick"
        if number == 1:
            fits_a_phone(page)
        page.keyboard.press("ArrowRight")  # the next card (or the hand's end): the trick won stays listed
        assert tricks.count() == (number if number == len(hand["tricks"]) else number + 1)
    assert page.locator("#tricks-title").inner_text() == f"Tricks of hand {hand['number']}"
    assert page.locator("#position").inner_text().startswith("step ")
    while not caption.inner_text().startswith("end of hand"):
        page.keyboard.press("ArrowRight")
    assert page.locator("#scores tbody tr").count() == 1 and page.locator("#no-scores").is_hidden()


def test_every_page_as_a_visitor(site: Site, page: Any) -> None:
    board = site.stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder=LADDER)).standings
    leader = board[0]
    page.goto(site.url + "/")
    audit(page, "tour-ladders")
    page.click(f"#ladders a:text-is('{LADDER}')")
    audit(page, "tour-leaderboard")
    # the browser's own ring was 1 px wide, and on the dark header hard to see
    assert focus_ring(page, "#leaderboard a") >= 2 and focus_ring(page, "header nav a") >= 2

    def archived() -> bool:
        request = pb.GetRatingHistoryRequest(ladder=LADDER, agent_id=leader.agent_id)
        return len(site.stub.GetRatingHistory(request).points) == leader.games

    wait_until(archived, 30, "the leader's matches to be archived")
    page.click(f"#leaderboard a:text-is('{leader.name}')")
    page.wait_for_selector("#standing")
    audit(page, "tour-agent")
    page.click("a#all-matches")  # the agent's matches
    assert page.locator("h1").inner_text() == f"Matches of {LADDER} with {leader.name}"
    audit(page, "tour-agent-matches")
    page.set_viewport_size({"width": 390, "height": 900})
    assert page.evaluate(SPLIT_SCORES) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#matches tbody tr a[href^='/matches/']").first.click()  # a replay
    page.wait_for_selector("#scrub")
    for _ in range(len(board) + 8):
        page.keyboard.press("ArrowRight")
    audit(page, "tour-replay")
    page.click(f"#seats a:text-is('{leader.name}')")  # back to an agent of the match
    assert page.locator("h1").inner_text() == leader.name

    page.goto(f"{site.url}/matches?ladder=&agent=&state=")
    audit(page, "tour-matches-choose")
    page.goto(f"{site.url}/matches/no-such-match")
    audit(page, "tour-not-found")
    page.goto(site.url + "/tournaments")
    audit(page, "tour-tournaments-none")
    page.goto(site.url + "/host/login")
    audit(page, "tour-login")


def test_every_host_page(site: Site, page: Any) -> None:
    page.goto(site.url + "/host/login")
    page.fill("input[name=token]", HOST_TOKEN)
    page.click("button:text('Sign in')")
    page.wait_for_url(site.url + "/host")
    audit(page, "tour-host")
    page.click(".edit-settings summary")  # each ladder's settings form, opened: at 390 px too
    assert page.locator(".edit-settings form input[name=seats]").first.is_visible()
    audit(page, "tour-host-edit-settings")
    page.goto(site.url + "/host/tournaments")
    form = page.locator("#create-tournament")
    form.locator("input[name=tournament_id]").fill("tour")
    form.locator("textarea[name=entrants]").fill("builtin:strong\nbuiltin:heuristic\nbuiltin:random")
    form.locator("input[name=deals]").fill("5")  # 15 games: more than a table's row lists, so a page of its own
    form.locator("textarea[name=options]").fill("hand_sizes=[3,2,1]")
    audit(page, "tour-host-tournaments")
    form.locator("button").click()
    page.wait_for_url(f"{site.url}/tournaments/tour")
    page.wait_for_selector("#live[data-state=finished]", timeout=60_000)
    audit(page, "tour-tournament")
    page.click("#tables a.table-games")
    assert page.locator("h1").inner_text() == "Table r1t0 of tour"
    assert page.locator("#games tbody a").count() == 15
    audit(page, "tour-tournament-table")
    page.goto(site.url + "/tournaments")
    audit(page, "tour-tournaments")
    page.goto(site.url + "/host/tournaments")
    audit(page, "tour-host-tournaments-done")
