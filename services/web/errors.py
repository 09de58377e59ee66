"""What a visitor sees of a failed matchmaker or engine call: the HTTP status for its gRPC code, a
title, and a message that names no internals (the services' own words only where they are about
the visitor's request)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from http import HTTPStatus

from services.web.api import ApiError

STATUS = {
    "INVALID_ARGUMENT": 400,
    "OUT_OF_RANGE": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
# the codes whose message is about the request; any other's is replaced (it may name hosts or files)
OWN_WORDS = {"INVALID_ARGUMENT", "OUT_OF_RANGE", "FAILED_PRECONDITION", "NOT_FOUND", "ALREADY_EXISTS"}
PLAIN = {
    "UNAUTHENTICATED": "this page needs a credential the web app does not have",
    "PERMISSION_DENIED": "the web app may not read this",
    "RESOURCE_EXHAUSTED": "the arena is busy: try again shortly",
    "UNIMPLEMENTED": "the arena's services do not offer this yet",
    "UNAVAILABLE": "the arena's services cannot be reached just now: try again shortly",
    "DEADLINE_EXCEEDED": "the arena's services took too long to answer: try again shortly",
}
OTHER = "the arena's services failed to answer this page"
# an error page's heading, by its HTTP status: the gRPC code's name (NOT_FOUND) or a bare number
# (404) read as a fault of the page itself
TITLES = {
    400: "Not a request the arena can answer",
    401: "Credential needed",
    403: "Not allowed",
    404: "Not found",
    405: "Not a page to open",
    409: "Already there",
    413: "Too large",
    429: "Too many requests",
    501: "Not offered",
    502: "The arena's services failed",
    503: "The arena's services are unavailable",
    504: "The arena's services took too long",
}
# what the page says when all it has is the status's own phrase ("Not Found")
PLAIN_STATUS = {
    404: "There is no page at this address.",
    405: "This address takes a form's answer: go back to the page the form is on.",
}


@dataclass(frozen=True)
class ShownError:
    status: int
    title: str
    message: str
    retry_after: str = ""  # whole seconds for the Retry-After header, or none


def title_of(status: int) -> str:
    return TITLES.get(status) or HTTPStatus(status).phrase


def http_error_page(status: int, detail: str) -> ShownError:
    """An error the web app raised itself: Starlette's detail is the status's own phrase unless one was given."""
    plain = detail == HTTPStatus(status).phrase
    return ShownError(status, title_of(status), PLAIN_STATUS.get(status, detail) if plain else detail)


def error_page(error: ApiError) -> ShownError:
    status = STATUS.get(error.code, 502)
    message = error.message if error.code in OWN_WORDS else PLAIN.get(error.code, OTHER)
    retry_after = ""
    if error.code == "RESOURCE_EXHAUSTED" and error.retry_after_s is not None:
        retry_after = str(max(1, math.ceil(error.retry_after_s)))
    return ShownError(status, title_of(status), message, retry_after)
