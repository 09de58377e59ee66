"""A number that rounds to zero is shown as 0, never as -0.0: the ladder standings (web app, ``ohell
leaderboard``, the demo's), the tournament standings (web app, ``ohell tournament standings``) and
``ohell play``'s mean scores printed ``-0.00`` and ``-0.0`` for a value just under zero."""

from __future__ import annotations

import pytest

from arena import cli
from arena.local.output import text_console
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from ohell.tally import BotTally, SeriesTally
from services.web import tournament_views, views


def test_the_web_standings_show_no_negative_zero() -> None:
    ladder = views.standing_row(pb.Standing(rank=1, name="a", ordinal=-0.004, mu=-0.001, sigma=0.5, games=3))
    assert (ladder["ordinal"], ladder["mu"], ladder["sigma"]) == ("0.00", "0.00", "0.50")
    standing = tpb.TournamentStanding(
        rank=1, entrant="a", mean_duplicate=-0.004, ci_low=-0.001, ci_high=1.5, mean_score=-0.002
    )
    (row,) = tournament_views.standing_rows([standing])
    assert (row["mean"], row["ci"], row["mean_score"]) == ("+0.00", "[+0.00, +1.50]", "0.00")
    below = tpb.TournamentStanding(rank=1, entrant="b", mean_duplicate=-0.006, ci_low=-1.25, ci_high=-0.005)
    (row,) = tournament_views.standing_rows([below])
    assert (row["mean"], row["ci"]) == ("-0.01", "[-1.25, -0.01]")  # below zero once rounded: still negative


def test_ohell_play_shows_no_negative_zero(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "console", text_console())
    tally = SeriesTally({"random": BotTally("random", games=30, points=-1), "strong": BotTally("strong", games=30)})
    cli.print_tally(tally, "series")
    out = capsys.readouterr().out
    assert "-0.0" not in out and out.count(" 0.0 ") == 2, out
