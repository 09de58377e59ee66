"""The agent page's rating chart says what it plots: a caption under it (the chart had only an
aria-label, which a sighted reader never sees), and a scale of 2 decimals with grid lines (its two
labels were ``.4g``: 3.142 at the top, 1e+01 for ten, and no middle)."""

from __future__ import annotations

import re
from types import SimpleNamespace

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
