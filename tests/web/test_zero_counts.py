"""A tournament's counts typed as 0: the request's 0 stands for the default (3 seats, 1 round, 2 deal
sets), so `ohell tournament create ... --seats 0 --deals 0` and the host page's form with 0 in those
fields created a tournament of 3 seats and 2 deal sets without a word. Each is refused where it is
typed now; 0 s of grace stays a value of its own."""

from __future__ import annotations

import pytest

from arena.cli import build_parser
from ohell.errors import OhHellError
from services.web.tournaments import tournament_from_form

ENTRANTS = "builtin:strong\nbuiltin:heuristic\nbuiltin:random"


@pytest.mark.parametrize("field", ["seats", "rounds", "deals"])
def test_a_count_of_zero_on_the_host_page_is_refused_naming_its_field(field: str) -> None:
    with pytest.raises(OhHellError) as refused:
        tournament_from_form({"tournament_id": "cup", "entrants": ENTRANTS, field: "0"})
    assert str(refused.value) == f"{field}: '0' is out of range"
    given = tournament_from_form({"tournament_id": "cup", "entrants": ENTRANTS, field: "1", "grace_seconds": "0"})
    assert getattr(given, field) == 1 and given.HasField("grace_seconds") and given.grace_seconds == 0


@pytest.mark.parametrize("flag", ["--seats", "--rounds", "--deals"])
def test_a_count_of_zero_on_the_command_line_is_a_usage_error(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    command = ["tournament", "create", "cup", "--entrant", "builtin:random", flag]
    with pytest.raises(SystemExit) as usage:
        build_parser().parse_args([*command, "0"])
    assert usage.value.code == 2 and "0 is not a whole number from 1 to" in capsys.readouterr().err
    assert getattr(build_parser().parse_args([*command, "1"]), flag.removeprefix("--")) == 1
