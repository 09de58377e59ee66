"""What a visitor's live view is told when the engine cannot be asked, on the web app's own process
(port 0) with nothing behind it: the error page's plain words, never the gRPC library's text naming
the engine's address (an anonymous visitor learnt the internal host and port from it)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from services.web.errors import PLAIN

from .conftest import start_web

ENGINE = "127.0.0.1:9"  # nothing listens there: the call fails at once, UNAVAILABLE


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    nowhere = SimpleNamespace(matchmaker_address="127.0.0.1:9", engine_address=ENGINE)
    process, address = start_web(nowhere, Path(tmp_path_factory.mktemp("web")) / "web.log")  # type: ignore[arg-type]
    try:
        yield address
    finally:
        process.terminate()
        process.wait(10)


def test_a_live_view_that_cannot_reach_the_engine_names_no_internals(url: str) -> None:
    with urllib.request.urlopen(f"{url}/live/main-1/events", timeout=30) as reply:
        body = reply.read().decode()
    kind, data = [line.split(": ", 1)[1] for line in body.splitlines() if line][:2]
    error = json.loads(data)["error"]
    assert kind == "failed" and error == f"UNAVAILABLE: {PLAIN['UNAVAILABLE']}", error
