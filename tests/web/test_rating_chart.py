"""The agent page's rating chart says what it plots: a caption under it (the chart had only an
aria-label, which a sighted reader never sees), and a scale of 2 decimals with grid lines (its two
labels were ``.4g``: 3.142 at the top, 1e+01 for ten, and no middle), readable on a phone (in
Chromium: the page rendered from its template, with the app's stylesheet)."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from services.web.pages import HERE, templates
from services.web.views import CHART_POINTS, rating_chart


def points(*pairs: tuple[float, float]) -> list[SimpleNamespace]:
    return [SimpleNamespace(mu_after=mu, sigma_after=sigma) for mu, sigma in pairs]


def test_the_chart_has_a_caption_and_a_scale_of_two_decimals() -> None:
    chart = str(rating_chart(points((3.14159, 0.5), (10.0, 0.25), (2.0, 1.0))))
    (caption,) = re.findall(r"<figcaption>(.*?)</figcaption>", chart)
    assert caption.startswith("Rating (mu) after each of 3 rated matches, oldest on the left;")
    assert "band is mu ± sigma" in caption and "Scale: mu, to 2 decimals." in caption
    scale = re.findall(r'<text class="scale"[^>]*>([^<]*)</text>', chart)
    assert scale == ["10.25", "5.62", "1.00"]  # the band's top, the middle, the band's bottom
    assert len(re.findall(r'<line class="grid"', chart)) == 3
    assert re.findall(r"<title>([^<]*)</title>", chart) == ["3.14", "10.00", "2.00"]


def test_a_long_history_says_it_is_drawn_from_some_of_its_points() -> None:
    many = points(*[(25.0 + i / 100, 8.0) for i in range(2 * CHART_POINTS + 1)])
    chart = str(rating_chart(many))
    (caption,) = re.findall(r"<figcaption>(.*?)</figcaption>", chart)
    drawn = chart.count("<circle")
    assert drawn <= CHART_POINTS + 1 and f"after each of {len(many)} rated matches" in caption
    assert f"Drawn from {drawn} evenly spaced matches of them, the latest included." in caption
    assert rating_chart([]) is None


def serve_agent_page(page: Any, chart: Any) -> None:
    """The agent page rendered from its template with ``chart``, and the app's stylesheet (no stack)."""
    agent = SimpleNamespace(agent_id="a1", name="strong-1", bot="strong", version="", house=False)
    html = templates.env.get_template("agent.html").render(
        agent=agent, ladder="class", standing=None, matches=[], chart=chart, rated=3, host_session=False
    )

    def serve(route: Any) -> None:
        path = route.request.url.removeprefix("http://web.test")
        if path.startswith("/static/"):
            route.fulfill(path=str(HERE / path.lstrip("/")), content_type="text/css")
        else:
            route.fulfill(body=html, content_type="text/html")

    page.route("http://web.test/**", serve)
    page.goto("http://web.test/agents/a1")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_scale_is_readable_and_whole_on_a_phone_and_a_desktop(page: Any, width: int) -> None:
    """On a 390 px phone the scale's text was drawn 7 px high (11 of the chart's 600 units, the chart
    shrunk to 372 px); a scale of long values must not be cut at the chart's left edge either."""
    page.set_viewport_size({"width": width, "height": 900})
    serve_agent_page(page, rating_chart(points((-1234.5, 0.5), (-1000.25, 2.0), (-1100.0, 1.0))))
    drawn = page.evaluate(
        """() => {
        const svg = document.querySelector("#chart svg"), box = svg.getBoundingClientRect();
        const scale = box.width / svg.viewBox.baseVal.width;
        return [...svg.querySelectorAll("text.scale")].map((t) => {
            const r = t.getBoundingClientRect();
            return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale,
                    inside: r.left >= box.left && r.right <= box.right};
        });
    }"""
    )
    assert [label["text"] for label in drawn] == ["-998.25", "-1116.62", "-1235.00"]
    for label in drawn:
        assert label["px"] >= 12, (width, label)
        assert label["inside"], (width, label)
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
