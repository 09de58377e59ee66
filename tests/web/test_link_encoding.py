"""Links the templates build keep the values they carry: each value put into a URL goes through
``urlencode``. The matches page put the visitor's own ``ladder`` and ``agent`` filters into its
next-page link as typed, so an agent filter of ``a1&ladder=other`` turned into a second ladder."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, unquote, urlsplit

from services.web.pages import HERE, templates

TEMPLATES = HERE / "templates"
URL_ATTRIBUTE = re.compile(r'\b(?:href|action|src|data-live)="([^"]*)"')
VALUE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


def test_the_next_page_link_carries_the_filters_as_they_were_given() -> None:
    ladder, agent = "class 2", "a1&ladder=other#x"
    html = templates.env.get_template("matches.html").render(
        host_session=False, ladder=ladder, agent_id=agent, agent_name="", matches=[], ladders=[ladder],
        choose=False, running=True, total=60, total_text="60", shown=50, next_page="after:class-7+1",
    )  # fmt: skip
    found = re.search(r'id="next-page" href="([^"]*)"', html)
    assert found, html
    link = urlsplit(found.group(1).replace("&amp;", "&"))
    assert (link.path, link.fragment) == ("/matches", "")
    query = parse_qs(link.query, keep_blank_values=True)
    assert query == {"ladder": [ladder], "agent": [agent], "state": ["running"], "page": ["after:class-7+1"]}


def test_every_value_in_a_templates_url_is_encoded() -> None:
    """A URL the server built whole (``href="{{ tokens_href }}"``) is left as it is."""
    unencoded = []
    for path in sorted(TEMPLATES.glob("*.html")):
        for url in URL_ATTRIBUTE.findall(path.read_text()):
            if VALUE.fullmatch(url):
                continue
            unencoded += [f"{path.name}: {url}" for value in VALUE.findall(url) if not value.endswith("|urlencode")]
    assert not unencoded


def test_the_live_views_feed_is_asked_for_the_match_as_typed() -> None:
    """The live view of a match the matchmaker does not know puts the id from the address into its
    feed's URL, in JSON (where the attribute check above does not look): ``a?b`` asked ``/live/a``
    with the query ``b/events``."""
    match_id = "a?b#c d"
    html = templates.env.get_template("live.html").render(
        match=None, match_id=match_id, seats=[], known=False, builtin_only=False, host_session=False
    )
    found = re.search(r'<script id="live-config" type="application/json">(.*?)</script>', html)
    assert found, html
    events = urlsplit(json.loads(found.group(1))["events"])
    assert (unquote(events.path), events.query, events.fragment) == (f"/live/{match_id}/events", "", "")
