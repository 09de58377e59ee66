"""A URL as it may be printed (and so logged): its secrets hidden, also in the errors that repeat
parts of it. Below everything of the project, so that the archive's migration and the services'
start-up checks show URLs the same way."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

# The password as SQLAlchemy's URL parser reads it: after the user name's ':' up to the first '@', '/',
# '#' and '?' included (a base64 password holds '/'), where urlsplit ends the host part at them
PASSWORD_AS_SQLALCHEMY_READS = re.compile(r"^[\w+]+://[^:/]*:([^@]*)@")


def url_secrets(url: str) -> list[str]:
    """What of ``url`` must never be printed, longest first: its password as written (all of the user
    part after the first ':' up to the last '@': a password with a bare '@' in it is read by
    SQLAlchemy and libpq as a shorter password and the rest as part of the host, which their errors
    then name) and its pieces between '@'s, and the values of query parameters that are passwords
    (``?password=``, ``?sslpassword=``: libpq and redis-py take them), each also decoded; and the
    password as SQLAlchemy reads it (``PASSWORD_AS_SQLALCHEMY_READS``)."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    found: set[str] = set()
    if at and ":" in userinfo:
        password = userinfo.partition(":")[2]
        found.add(password)
        found.update(piece for piece in password.split("@") if len(piece) >= 3)
    read = PASSWORD_AS_SQLALCHEMY_READS.match(url)
    if read:  # and its pieces: redis-py, splitting as urlsplit does, names the one before a '/' as the port
        found.add(read.group(1))
        found.update(piece for piece in re.split(r"[/#?@]", read.group(1)) if len(piece) >= 3)
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if "password" in name.lower() or "secret" in name.lower():
            found.add(value)
    found.update([unquote(secret) for secret in found])
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def redacted(text: str, url: str) -> str:
    """``text`` (an error about ``url``, which may repeat parts of it) with ``url``'s secrets as ``***``."""
    for secret in url_secrets(url):
        text = text.replace(secret, "***")
    return text


def shown_url(url: str) -> str:
    """``url`` with its password, if it has one, and any password in its query as ``***`` (what is
    printed may be logged)."""
    parts, shown = urlsplit(url), url  # not split and joined again: that made sqlite:////tmp/a.db sqlite://tmp/a.db
    if parts.password is not None:
        user, _, host = parts.netloc.rpartition("@")
        shown = urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}"))
    return redacted(shown, url)
