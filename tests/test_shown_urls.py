"""What of a URL is never printed (arena.shown_urls), against the libraries' own readings of it."""

from __future__ import annotations

import pytest
import redis

from arena.shown_urls import redacted, shown_url


def test_the_error_of_a_redis_url_whose_password_holds_a_slash_names_no_part_of_it() -> None:
    """redis-py splits the URL as urlsplit does: the password's part before the '/' is read as the
    port, and its error names it ("Port could not be cast to integer value as 'Ab-s3cret'"), which
    `ohell ladder rebuild` printed after the URL."""
    url = "redis://:Ab-s3cret/More-s3cret@127.0.0.1:6379/0"
    with pytest.raises(ValueError) as refused:
        redis.Redis.from_url(url)
    said = f"{shown_url(url)}: {redacted(str(refused.value), url)}"
    assert "s3cret" not in said, said
