"""The host page's ladder form: a field that is not a number is refused by its own name. One
sentence ("seats must be a whole number and fill-after a number of seconds") was said for either
field, naming neither the one at fault nor what was typed."""

from __future__ import annotations

import pytest

from services.web.host import ladder_from_form


def test_the_field_that_is_not_a_number_is_named() -> None:
    ladder = ladder_from_form({"name": " class ", "seats": "5", "fill_after_seconds": "2.5", "house_bots": "random, "})
    assert (ladder.name, ladder.seats, ladder.fill_after_seconds) == ("class", 5, 2.5)
    assert list(ladder.house_bots) == ["random"] and ladder.house_fill
    assert ladder_from_form({"seats": "4", "fill_after_seconds": ""}).fill_after_seconds == 0
    for form, said in (
        ({"seats": "four"}, "seats: 'four' is not a whole number from 3 to 7"),
        ({"seats": "99999999999"}, "seats: '99999999999' is not a whole number from 3 to 7"),
        ({"seats": "4", "fill_after_seconds": "soon"}, "fill after: 'soon' is not a number of seconds"),
    ):
        with pytest.raises(ValueError) as refused:
            ladder_from_form(form)
        assert str(refused.value) == said
