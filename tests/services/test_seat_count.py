"""A match of too few or too many seats is refused naming the request's field: a challenge of two
seats was refused as "a match needs 3 to 7 seats, got 2", where every other refusal of a seat
starts with the field (``seats[0].bot: 'nobody' ...``)."""

from __future__ import annotations

import pytest

from arena.play.host import check_seats
from arena.play.specs import SeatSpec, SeatSpecError


@pytest.mark.parametrize("count", [2, 8])
def test_a_seat_count_out_of_range_names_seats(count: int) -> None:
    with pytest.raises(SeatSpecError) as refused:
        check_seats([SeatSpec.builtin("random")] * count)
    assert str(refused.value) == f"seats: a match needs 3 to 7 seats, got {count}"
    check_seats([SeatSpec.builtin("random")] * 3)
