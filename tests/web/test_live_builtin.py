"""The live view of a ladder's match of built-in bots only: a worker plays it in its own process, so
the engine has no feed of it. The page said 'connecting…' for the engine's 10 s wait, then 'no live
feed', and never when the match was over; now it says at once why there is no feed, and its events
say only when the match is over (the matchmaker asked about it, the engine never). The real Api's
calls run; only the matchmaker's answers are stand-ins."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from services.web import app as web_app
from services.web.api import Api, ApiError
from services.web.app import UNRECORDED, create_app
from services.web.pages import templates

from .conftest import serve_pages

with warnings.catch_warnings():  # as tests/web/test_host_cookies.py: httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

KINDS = {"a1": pb.AGENT_KIND_BUILTIN, "a2": pb.AGENT_KIND_BUILTIN, "a3": pb.AGENT_KIND_CONNECTED}


class Ladder(Api):
    """Match "m-1" of a1, a2 (built-in bots), running for ``running_for`` look-ups, then finished;
    "m-2" of a1 and a3 (a connected agent), running."""

    def __init__(self, running_for: int, ends: str = "finished") -> None:
        super().__init__("127.0.0.1:9", "127.0.0.1:9")
        self.running_for = running_for
        self.ends = ends  # "m-1"'s end: "finished", "failed" (no record) or "gone" (NOT_FOUND: its ladder deleted)
        self.asked: list[str] = []  # GetAgent's agent ids, in order
        self.spectated: list[str] = []

    async def _call(self, method: str, request: Any, token: str = "") -> Any:
        if method == "GetAgent":
            self.asked.append(request.agent_id)
            if request.agent_id not in KINDS:
                raise ApiError("NOT_FOUND", "no such agent")
            agent = pb.Agent(agent_id=request.agent_id, name=f"bot-{request.agent_id}", kind=KINDS[request.agent_id])
            return pb.GetAgentResponse(agent=agent)
        assert method == "GetMatch", method
        seats = ["a1", "a2"] if request.match_id == "m-1" else ["a1", "a3"]
        summary = pb.MatchSummary(match_id=request.match_id, ladder="class", state="running", agent_ids=seats)
        if request.match_id == "m-1":
            self.running_for -= 1
            if -50 < self.running_for < 0 and self.ends == "gone":  # then finished: a loop asking for ever ends
                raise ApiError("NOT_FOUND", "no match 'm-1'")
            if self.running_for < 0 and self.ends == "failed":
                summary.state = "failed"
                return pb.GetMatchResponse(match=summary)
            if self.running_for < 0:
                summary.state = "finished"
                return pb.GetMatchResponse(match=summary, record_json=json.dumps({"seats": []}))
        return pb.GetMatchResponse(match=summary)

    async def spectate(self, match_id: str, wait_ms: int = 0) -> AsyncIterator[dict[str, Any]]:
        self.spectated.append(match_id)
        for event in ():
            yield event


def config(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="live-config" type="application/json">(.*?)</script>', html)
    assert found, html
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_the_live_view_of_built_in_bots_says_it_has_no_feed_and_its_events_say_when_it_is_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_app, "FOLLOW_EVERY_S", 0.01)
    api = Ladder(running_for=4)
    with TestClient(create_app(api)) as client:
        shown = client.get("/live/m-1")
        assert shown.status_code == 200 and config(shown.text)["feed"] is False
        links = '<a href="/agents/a1?ladder=class">bot-a1</a>, <a href="/agents/a2?ladder=class">bot-a2</a>'
        assert f'<p id="no-feed">Built-in bots only ({links})' in shown.text  # each to its agent's page
        assert '<div id="board" hidden>' in shown.text and "public events only" not in shown.text
        events = client.get("/live/m-1/events").text
        assert events == "event: done\ndata: {}\n\n" and api.spectated == []  # the engine never asked
        assert api.running_for < 0  # it waited for the match's end
        assert sorted(api.asked) == ["a1", "a2"]  # each kind asked once, for the page and its events


def test_a_match_with_an_agent_that_is_not_built_in_has_its_feed() -> None:
    api = Ladder(running_for=4)
    with TestClient(create_app(api)) as client:
        shown = client.get("/live/m-2")
        assert config(shown.text)["feed"] is True and 'id="no-feed"' not in shown.text
        assert "public events only" in shown.text
        assert client.get("/live/m-2/events").text == "event: done\ndata: {}\n\n" and api.spectated == ["m-2"]


@pytest.mark.parametrize(
    ("ends", "said"),
    [
        ("failed", "the match failed before its end: it has no replay"),
        ("gone", "the match is no longer known (its ladder deleted?): it has no replay"),
    ],
)
def test_a_match_of_built_in_bots_that_ends_with_no_record_is_not_said_to_be_over_with_a_replay(
    monkeypatch: pytest.MonkeyPatch, ends: str, said: str
) -> None:
    """A failed match was 'done' ('The match is over: watch its replay', a link to this same page), and
    one no longer known was asked about every second for as long as the page stayed open."""
    monkeypatch.setattr(web_app, "FOLLOW_EVERY_S", 0.01)
    api = Ladder(running_for=2, ends=ends)
    with TestClient(create_app(api)) as client:
        events = client.get("/live/m-1/events").text
    failed = {"code": ends.upper(), "error": said, "final": True}
    assert events == f"event: failed\ndata: {json.dumps(failed)}\n\n" and api.spectated == []


def test_the_page_of_a_failed_match_of_built_in_bots_says_so_and_promises_no_replay(page: Any) -> None:
    """live.js showed the 'failed' event's words but also 'When the match has ended, its replay is at
    ...', of a match that has ended with none. Chromium, the page rendered from its template."""
    summary = pb.MatchSummary(match_id="m-1", ladder="class", state="running", agent_ids=["a1", "a2"])
    html = templates.env.get_template("live.html").render(
        match=summary, seats=["bot-a1", "bot-a2"], builtin_only=True, host_session=False
    )
    failed = {"code": "FAILED", "error": UNRECORDED["failed"], "final": True}

    events = f"event: failed\ndata: {json.dumps(failed)}\n\n"
    serve_pages(page, {"/live/m-1": (html, "text/html"), "/live/m-1/events": (events, "text/event-stream")})
    page.goto("http://web.test/live/m-1")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('the match failed')")
    assert page.locator("#status").inner_text() == UNRECORDED["failed"]
    assert page.locator("#later").is_hidden() and page.locator("#done").is_hidden()


def test_the_live_views_seat_names_link_to_their_agents_pages(page: Any) -> None:
    """The replay's seat names link to the agents' pages; the live view's were plain text. Each link
    carries the agent id and the ladder URL-encoded (ids the matchmaker did not make included)."""
    agent_ids = ["a1", "a 2?&x#y"]
    summary = pb.MatchSummary(match_id="m-2", ladder="class", state="running", agent_ids=agent_ids)
    html = templates.env.get_template("live.html").render(
        match=summary, seats=["ann", "bob"], agent_ids=agent_ids, builtin_only=False, host_session=False
    )
    started = {"kind": "match_started", "seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]}
    events = f"event: match\ndata: {json.dumps(started)}\n\n"
    serve_pages(page, {"/live/m-2": (html, "text/html"), "/live/m-2/events": (events, "text/event-stream")})
    page.goto("http://web.test/live/m-2")
    page.wait_for_function("document.body.dataset.events === '1'")
    links = page.locator("#seats .seat .name a")
    assert links.all_inner_texts() == ["ann", "bob"]
    hrefs = [links.nth(seat).get_attribute("href") for seat in range(2)]
    assert hrefs == ["/agents/a1?ladder=class", "/agents/a%202%3F%26x%23y?ladder=class"]
    challenge = templates.env.get_template("live.html").render(  # no agent ids: the names alone
        match=None, match_id="c-1", seats=[], known=True, builtin_only=False, host_session=False
    )
    serve_pages(page, {"/live/c-1": (challenge, "text/html"), "/live/c-1/events": (events, "text/event-stream")})
    page.goto("http://web.test/live/c-1")
    page.wait_for_function("document.body.dataset.events === '1'")
    assert page.locator("#seats .seat .name").all_inner_texts() == ["ann", "bob"]
    assert page.locator("#seats .seat .name a").count() == 0
