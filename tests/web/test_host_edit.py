"""The host page's edit form of a ladder: its settings read from the matchmaker, the form's changed,
the whole definition sent back (UpdateLadder), as `ohell ladder update` does. The page could create,
pause, resume and delete a ladder, never change one. On real processes: redis-server, the matchmaker
(no workers), the web app."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata
from services.web.host import apply_settings

from .conftest import HOST_TOKEN, web_on_stack
from .test_host_forms import parse

HOST = auth_metadata(HOST_TOKEN)
# a ladder of every setting the form shows away from its default, rule options over its preset
# included, and paused: an update keeps what the form does not change
LADDER = pb.Ladder(
    name="edit",
    rules=rules_pb2.Rules(preset="classic", hand_sizes=[4, 3, 2]),
    seats=5,
    house_fill=True,
    house_bots=["random"],
    fill_after_seconds=2.5,
    base_window=0.1,
    widen_per_second=3,
    entry=pb.LADDER_ENTRY_HOST,
)


def test_the_form_sets_only_the_settings_it_gives_and_names_a_refused_one() -> None:
    ladder = pb.Ladder()
    ladder.CopyFrom(LADDER)
    apply_settings({"seats": " 4 ", "entry": "open"}, ladder)
    assert (ladder.seats, ladder.entry) == (4, pb.LADDER_ENTRY_OPEN)
    ladder.seats, ladder.entry = LADDER.seats, LADDER.entry
    assert ladder == LADDER
    apply_settings({"preset": "classic", "house_bots": "random"}, ladder)  # as it was: its options kept
    assert ladder == LADDER
    for form, said in (
        ({"base_window": "wide"}, "base window: 'wide' is not a number from 0 up (0: the default)"),
        ({"widen_per_second": "-1"}, "widen per second: '-1' is not a number from 0 up (0: the default)"),
        ({"fill_after_seconds": "nan"}, "fill after: 'nan' is not a number of seconds"),
        ({"seats": "7.5"}, "seats: '7.5' is not a whole number from 3 to 7"),
    ):
        with pytest.raises(ValueError) as refused:
            apply_settings(form, ladder)
        assert str(refused.value) == said


@pytest.fixture(scope="module")
def site(shared_redis_server: EmbeddedRedis) -> Iterator[tuple[str, matchmaker_pb2_grpc.MatchmakerServiceStub]]:
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=f"edit{os.getpid()}:",
        builtin_workers=0,
        remote_worker=False,
        engine=False,
        host_token=HOST_TOKEN,
    )

    def paused_ladder(stack: Stack, stub: Any) -> None:
        stub.CreateLadder(pb.CreateLadderRequest(ladder=LADDER), metadata=HOST)
        stub.PauseLadder(pb.PauseLadderRequest(name=LADDER.name), metadata=HOST)

    with web_on_stack(config, paused_ladder) as (_, stub, url):
        yield url, stub


@contextmanager
def signed_in(url: str) -> Iterator[tuple[httpx.Client, str]]:
    """A client signed in as the host, and its session's CSRF token."""
    with httpx.Client(base_url=url, timeout=30) as client:
        assert client.post("/host/login", data={"token": HOST_TOKEN}).status_code == 303
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/host").text)
        assert csrf
        yield client, csrf.group(1)


def error_of(page: str) -> str:
    found = re.search(r'id="error-message">([^<]*)<', page)
    return html.unescape(found.group(1)) if found else ""


def current(stub: matchmaker_pb2_grpc.MatchmakerServiceStub) -> pb.Ladder:
    return stub.GetLadder(pb.GetLadderRequest(name=LADDER.name)).ladder


@pytest.mark.slow
def test_the_host_changes_a_ladders_settings_from_its_prefilled_form(site: tuple[str, Any]) -> None:
    url, stub = site
    before = current(stub)
    with signed_in(url) as (client, csrf):
        fields = parse(client.get("/host").text, "edit-edit")
        assert fields == {
            "preset": "classic",
            "seats": "5",
            "house_bots": "random",
            "fill_after_seconds": "2.5",
            "entry": "",  # the first option: host
            "base_window": "0.1",
            "widen_per_second": "3",
        }
        fields |= {"entry": "host", "seats": "4", "base_window": "0.25"}
        answer = client.post("/host/ladders/edit/settings", data={"csrf": csrf, **fields})
        assert answer.status_code == 303, answer.text
        said = re.search(r'id="message">([^<]*)<', client.get(answer.headers["location"]).text)
        assert said and html.unescape(said.group(1)) == (
            "ladder edit updated: seats: 5 -> 4; base window: 0.1 -> 0.25; the tables formed from now on follow it"
        )
        after = current(stub)
        assert after.paused and list(after.rules.hand_sizes) == [4, 3, 2]
        after.seats, after.base_window = before.seats, before.base_window
        assert after == before  # nothing else changed
        # the same form again changes nothing, and says so
        answer = client.post("/host/ladders/edit/settings", data={"csrf": csrf, **fields, "seats": "4"})
        assert (
            'id="message">ladder edit unchanged: it has these settings already<'
            in client.get(answer.headers["location"]).text
        )
        # one field alone changes that one
        client.post("/host/ladders/edit/settings", data={"csrf": csrf, "entry": "open"})
        after = current(stub)
        assert after.entry == pb.LADDER_ENTRY_OPEN and after.seats == 4 and after.paused


@pytest.mark.slow
def test_a_refused_value_names_its_field_and_leaves_the_ladder_as_it_was(site: tuple[str, Any]) -> None:
    url, stub = site
    before = current(stub)
    with signed_in(url) as (client, csrf):
        for form, said in (
            ({"seats": "many"}, "ladder edit not updated: seats: 'many' is not a whole number from 3 to 7"),
            ({"widen_per_second": "fast"}, "ladder edit not updated: widen per second: 'fast' is not a number"),
            ({"seats": "9"}, "ladder edit not updated: ladder.seats"),  # the matchmaker's refusal
            ({"house_bots": "nope"}, "ladder edit not updated: ladder.house_bots"),
        ):
            shown = client.post("/host/ladders/edit/settings", data={"csrf": csrf, **form})
            assert shown.status_code == 400 and error_of(shown.text).startswith(said), error_of(shown.text)
            # the form is open again with what was typed
            assert {key: parse(shown.text, "edit-edit")[key] for key in form} == form
            assert '<details class="edit-settings" open>' in shown.text
            assert current(stub) == before
        missing = client.post("/host/ladders/gone/settings", data={"csrf": csrf, "seats": "4"})
        assert missing.status_code == 400 and error_of(missing.text).startswith("ladder gone not updated: ")


@pytest.mark.slow
def test_an_edit_without_a_host_session_or_its_csrf_token_is_refused(site: tuple[str, Any]) -> None:
    url, stub = site
    before = current(stub)
    with httpx.Client(base_url=url, timeout=30) as stranger:
        assert stranger.post("/host/ladders/edit/settings", data={"seats": "3"}).status_code == 403
    with signed_in(url) as (client, csrf):
        for form in ({"seats": "3"}, {"seats": "3", "csrf": csrf + "x"}):
            assert client.post("/host/ladders/edit/settings", data=form).status_code == 403
    assert current(stub) == before
