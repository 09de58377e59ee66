"""The host page's ladder form: a field that is not a number is refused by its own name. One
sentence ("seats must be a whole number and fill-after a number of seconds") was said for either
field, naming neither the one at fault nor what was typed."""

from __future__ import annotations

import html
import re
import warnings
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from services.web.api import Api, ApiError
from services.web.app import create_app
from services.web.host import ladder_from_form

with warnings.catch_warnings():  # as tests/web/test_host_cookies.py: httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

TOKEN = "host-secret"


def test_the_field_that_is_not_a_number_is_named() -> None:
    ladder = ladder_from_form({"name": " class ", "seats": "5", "fill_after_seconds": "2.5", "house_bots": "random, "})
    assert (ladder.name, ladder.seats, ladder.fill_after_seconds) == ("class", 5, 2.5)
    assert list(ladder.house_bots) == ["random"] and ladder.house_fill
    assert ladder_from_form({"seats": "4", "fill_after_seconds": ""}).fill_after_seconds == 0
    # who may queue: the host's agents by default; "open" lets self-registered agents in too
    assert ladder_from_form({"seats": "4"}).entry == pb.LADDER_ENTRY_HOST
    assert ladder_from_form({"seats": "4", "entry": "open"}).entry == pb.LADDER_ENTRY_OPEN
    for form, said in (
        ({"seats": "four"}, "seats: 'four' is not a whole number from 3 to 7"),
        ({"seats": "99999999999"}, "seats: '99999999999' is not a whole number from 3 to 7"),
        ({"seats": "4", "fill_after_seconds": "soon"}, "fill after: 'soon' is not a number of seconds"),
        ({"seats": "4", "entry": "anyone"}, "entry: 'anyone' is not host or open"),
    ):
        with pytest.raises(ValueError) as refused:
            ladder_from_form(form)
        assert str(refused.value) == said


class Refusing(Api):
    """A matchmaker with one ladder ("class") that refuses every new ladder and agent as the real one does."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1:1")

    async def ladders(self) -> list[pb.Ladder]:
        return [pb.Ladder(name="class", rules=rules_pb2.Rules(preset="classic"), seats=4)]

    async def leaderboard(self, ladder: str) -> list[pb.Standing]:
        return []

    async def ladder(self, name: str) -> pb.GetLadderResponse:
        (ladder,) = [ladder for ladder in await self.ladders() if ladder.name == name] or [None]
        if ladder is None:
            raise ApiError("NOT_FOUND", f"no ladder {name!r}")
        return pb.GetLadderResponse(ladder=ladder)

    async def create_ladder(self, token: str, ladder: pb.Ladder) -> pb.Ladder:
        raise ApiError("INVALID_ARGUMENT", "ladder.house_bots: 'nope' is not a built-in bot")

    async def register_agent(self, token: str, name: str, kind: int, bot: str = "", endpoint: str = "") -> Any:
        raise ApiError("ALREADY_EXISTS", f"name: an agent named {name!r} exists")


def sign_in(client: TestClient) -> str:
    """Sign the client in as the host: its session's CSRF token."""
    assert client.post("/host/login", data={"token": TOKEN}, follow_redirects=False).status_code == 303
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/host").text).group(1)  # type: ignore[union-attr]


def test_a_refused_form_keeps_what_the_host_typed_and_says_why_in_words() -> None:
    """A refused ladder or agent form came back empty (seats and fill-after back at their defaults),
    its error led by the gRPC code ('ladder not created: INVALID_ARGUMENT: ladder.house_bots: ...')."""
    ladder = {"name": "cup", "preset": "river", "seats": "5", "house_bots": "nope", "fill_after_seconds": "2.5"}
    agents = {"names": "alice\nbob", "kind": "builtin", "bot": "strong", "endpoint": "", "join": "class"}
    with TestClient(create_app(Refusing(), host_token=TOKEN)) as client:
        csrf = sign_in(client)
        for path, form in (("/host/ladders", ladder), ("/host/agents", agents)):
            shown = client.post(path, data={"csrf": csrf, **form})
            assert shown.status_code == 400
            assert "INVALID_ARGUMENT" not in shown.text and "ALREADY_EXISTS" not in shown.text
            fields = parse(shown.text)
            assert {key: fields[key] for key in form} == form, fields
        assert (
            "ladder not created: ladder.house_bots: &#39;nope&#39; is not a built-in bot"
            in client.post("/host/ladders", data={"csrf": csrf, **ladder}).text
        )
        # the agents were refused by the matchmaker itself, each by name (the ladder to queue on is there)
        shown = client.post("/host/agents", data={"csrf": csrf, **agents}).text
        error = html.unescape(re.search(r'id="error-message">([^<]*)<', shown).group(1))  # type: ignore[union-attr]
        assert error == "alice: name: an agent named 'alice' exists; bob: name: an agent named 'bob' exists"


def parse(page: str, form: str = "") -> dict[str, str]:
    """Each form field's shown value: an input's value, a textarea's text, a select's chosen option;
    of the form whose id is ``form``, else of the forms above the ladders (create, register)."""
    if form:
        page = re.search(rf'<form [^>]*id="{form}"[^>]*>(.*?)</form>', page, re.S).group(1)  # type: ignore[union-attr]
    else:
        page = page.split("<h2>Ladders</h2>", 1)[0]
    fields = {
        name: html.unescape(value) for name, value in re.findall(r'<input name="(\w+)"[^>]*? value="([^"]*)"', page)
    }
    fields |= {
        name: html.unescape(text) for name, text in re.findall(r'<textarea name="(\w+)"[^>]*>([^<]*)</textarea>', page)
    }
    for name, options in re.findall(r'<select name="(\w+)">(.*?)</select>', page, flags=re.S):
        chosen = re.search(r"<option selected[^>]*>([^<]*)</option>", options)
        fields[name] = chosen.group(1) if chosen else ""
    return fields


class Obliging(Refusing):
    """A matchmaker that creates, pauses and resumes ladders as asked (the ladder list stays "class")."""

    def __init__(self) -> None:
        super().__init__()
        self.paused = False

    async def ladders(self) -> list[pb.Ladder]:
        return [pb.Ladder(name="class", rules=rules_pb2.Rules(preset="classic"), seats=4, paused=self.paused)]

    async def create_ladder(self, token: str, ladder: pb.Ladder) -> pb.Ladder:
        return ladder

    async def admin(self, token: str, method: str, **fields: Any) -> Any:
        self.paused = {"PauseLadder": True, "ResumeLadder": False}.get(method, self.paused)


def test_a_ladder_form_that_worked_leaves_the_host_on_the_host_page() -> None:
    """The host page was the form's answer at the form's address (/host/ladders/class/pause): a
    reload asked to post the form again, and opening that address later was a 405. It is now a
    redirect to /host, which says what was done."""
    with TestClient(create_app(Obliging(), host_token=TOKEN)) as client:
        csrf = sign_in(client)
        for path, said in (
            ("/host/ladders/class/pause", "ladder class: pause done"),
            ("/host/ladders/class/resume", "ladder class: resume done"),
        ):
            answer = client.post(path, data={"csrf": csrf}, follow_redirects=False)
            assert answer.status_code == 303 and answer.headers["location"].startswith("/host?")
            shown = client.get(answer.headers["location"])
            assert shown.status_code == 200 and f'id="message">{said}<' in shown.text
        form = {"csrf": csrf, "name": "class", "preset": "classic", "seats": "4"}
        answer = client.post("/host/ladders", data=form, follow_redirects=False)
        assert answer.status_code == 303
        assert 'id="message">ladder class created<' in client.get(answer.headers["location"]).text
        assert 'id="message"' not in client.get("/host?done=created&ladder=elsewhere").text  # no ladder, nothing said


def test_pause_or_resume_done_is_said_only_of_a_ladder_in_that_state() -> None:
    """The address's ``done`` was checked against the ladder's name alone: /host?done=pause&ladder=class
    of a running ladder said 'ladder class: pause done' above a card offering Pause."""
    api = Obliging()
    with TestClient(create_app(api, host_token=TOKEN)) as client:
        sign_in(client)
        for paused, done, said in ((False, "pause", False), (False, "resume", True), (True, "pause", True)):
            api.paused = paused
            shown = client.get(f"/host?done={done}&ladder=class").text
            assert (f'id="message">ladder class: {done} done<' in shown) is said, (paused, done)
        api.paused = True
        assert 'id="message"' not in client.get("/host?done=resume&ladder=class").text
        assert 'id="message"' not in client.get("/host?done=deleted&ladder=class").text  # it is there
        crafted = client.get("/host", params={"done": "deleted", "ladder": "Your session expired: sign in at x"})
        assert 'id="message"' not in crafted.text  # no name a ladder could have: no text of the link shown


class Deleting(Refusing):
    """A matchmaker whose ladders ("class", "cup") go when DeleteLadder names them."""

    def __init__(self) -> None:
        super().__init__()
        self.names = ["class", "cup"]
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def ladders(self) -> list[pb.Ladder]:
        return [pb.Ladder(name=name, rules=rules_pb2.Rules(preset="classic"), seats=4) for name in self.names]

    async def admin(self, token: str, method: str, **fields: Any) -> Any:
        self.calls.append((method, fields))
        if method == "DeleteLadder":
            self.names.remove(fields["name"])


def test_the_host_deletes_a_ladder_from_the_host_page_by_typing_its_name() -> None:
    """The app had the delete route, but the host page offered no way to reach it."""
    api = Deleting()
    with TestClient(create_app(api, host_token=TOKEN)) as client:
        csrf = sign_in(client)
        shown = client.get("/host").text
        for name in api.names:  # one form per ladder, whose confirmation is a field to type in
            form = re.search(
                rf'<form method="post" action="/host/ladders/{name}/delete"[^>]*>(.*?)</form>', shown, re.S
            )
            assert form, f"no delete form for ladder {name}"
            assert re.search(r'<input name="confirm" required', form.group(1))
            assert re.search(r'<button class="danger">Delete ladder</button>', form.group(1))
        typo = client.post("/host/ladders/cup/delete", data={"csrf": csrf, "confirm": "cu"})
        assert typo.status_code == 400 and "type the ladder&#39;s name (cup) to delete it" in typo.text
        assert api.calls == [] and api.names == ["class", "cup"]
        done = client.post("/host/ladders/cup/delete", data={"csrf": csrf, "confirm": "cup"}, follow_redirects=False)
        assert api.calls == [("DeleteLadder", {"name": "cup"})]
        # a redirect, as pause and resume: the answer at the form's address was posted again on a reload
        assert done.status_code == 303 and done.headers["location"] == "/host?done=deleted&ladder=cup"
        shown = client.get(done.headers["location"]).text
        assert 'id="message">ladder cup deleted: its matches stay readable by match id<' in shown
        assert 'data-ladder="cup"' not in shown and 'data-ladder="class"' in shown


def test_an_uploaded_csv_of_a_header_alone_is_said_to_hold_no_names() -> None:
    """A CSV holding only its 'name' header row was refused with 'give at least one agent name (or
    a CSV of names)', as if no file had been given."""
    with TestClient(create_app(Refusing(), host_token=TOKEN)) as client:
        csrf = sign_in(client)
        for content, said in (
            ("name\n", "the CSV class.csv has a header row and no names under it"),
            ("Name;email\n\n", "the CSV class.csv has a header row and no names under it"),
            ("\n", "the CSV class.csv has no names"),
        ):
            shown = client.post(
                "/host/agents", data={"csrf": csrf, "names": ""}, files={"csv": ("class.csv", content, "text/csv")}
            )
            assert shown.status_code == 400
            error = html.unescape(re.search(r'id="error-message">([^<]*)<', shown.text).group(1))  # type: ignore[union-attr]
            assert error.startswith(said) and "in the first column" in error, error


class Registering(Refusing):
    """A matchmaker that registers each agent it is asked to, and counts the asking."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def register_agent(self, token: str, name: str, kind: int, bot: str = "", endpoint: str = "") -> Any:
        self.asked.append(name)
        return await super().register_agent(token, name, kind, bot, endpoint)


def test_a_bot_for_an_agent_not_builtin_is_refused_once_before_the_matchmaker_is_asked() -> None:
    """The matchmaker refuses a bot given to a connected or endpoint agent, but once per name: the
    host page said it again for each name of the form."""
    api = Registering()
    with TestClient(create_app(api, host_token=TOKEN)) as client:
        csrf = sign_in(client)
        form = {"names": "alice\nbob\ncarol", "kind": "connected", "bot": "strong"}
        shown = client.post("/host/agents", data={"csrf": csrf, **form})
    assert shown.status_code == 400 and api.asked == []
    error = html.unescape(re.search(r'id="error-message">([^<]*)<', shown.text).group(1))  # type: ignore[union-attr]
    assert error == "bot 'strong' is for builtin agents only: a connected agent plays its own bot; nobody registered"
    assert {key: parse(shown.text)[key] for key in form} == form


def test_an_uploaded_csv_that_is_not_utf8_is_refused_before_the_matchmaker_is_asked() -> None:
    """A CSV saved as UTF-16 (a spreadsheet's "Unicode text") or Latin-1 was read with its bytes
    replaced: every name went to the matchmaker mangled ('\\x00a\\x00g...', 'Jos\\ufffd'), one refusal
    per name, where `ohell agent import` says the file is not UTF-8 text."""
    api = Registering()
    with TestClient(create_app(api, host_token=TOKEN)) as client:
        csrf = sign_in(client)
        for content in ("name\nalice\nbob\n".encode("utf-16"), "name\nalice\nJosé\n".encode("latin-1")):
            shown = client.post(
                "/host/agents", data={"csrf": csrf, "names": ""}, files={"csv": ("class.csv", content, "text/csv")}
            )
            assert shown.status_code == 400
            error = html.unescape(re.search(r'id="error-message">([^<]*)<', shown.text).group(1))  # type: ignore[union-attr]
            assert error.startswith("the CSV class.csv is not UTF-8 text") and "byte " in error, error
        marked = b"\xef\xbb\xbf" + "name\nJosé\n".encode("latin-1")  # after a byte-order mark: byte 11, not 8
        shown = client.post(
            "/host/agents", data={"csrf": csrf, "names": ""}, files={"csv": ("class.csv", marked, "text/csv")}
        )
        assert "is not UTF-8 text (byte 11)" in html.unescape(shown.text)
    assert api.asked == []


class Revoking(Refusing):
    """A matchmaker whose ladder "class" has two players, one of them ("gone") revoked."""

    async def leaderboard(self, ladder: str) -> list[pb.Standing]:
        return [pb.Standing(agent_id="a1", name="gone", games=3), pb.Standing(agent_id="a2", name="kept", games=3)]

    async def host_agents(self, token: str) -> list[pb.Agent]:
        assert token == TOKEN  # read as the host: nobody else is told
        return [
            pb.Agent(agent_id="a1", name="gone", revoked=True, revoked_ms=1_765_000_000_000),
            pb.Agent(agent_id="a2"),
        ]


def test_the_host_page_marks_revoked_agents_and_says_when_it_cannot_read_them() -> None:
    with TestClient(create_app(Revoking(), host_token=TOKEN)) as client:
        sign_in(client)
        shown = client.get("/host").text
    faults = shown.split('data-ladder="class"', 1)[1]
    assert re.search(r">gone</a> <span class=\"tag revoked\">revoked</span></td>", faults), faults
    assert not re.search(r">kept</a> <span", faults)
    assert (
        '<tr data-agent="a1"><td><a href="/agents/a1">gone</a></td><td>a1</td><td>2025-12-06 05:46:40 UTC</td>' in shown
    )
    with TestClient(create_app(Refusing(), host_token=TOKEN)) as client:  # its ListAgents unreachable (port 1)
        sign_in(client)
        shown = client.get("/host")
    assert shown.status_code == 200 and "the agents could not be read: " in shown.text
