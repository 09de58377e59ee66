"""The tournament pages in a real browser (Debian's Chromium through Playwright) against the real
stack: the host creates a small tournament of built-in bots from the form, watches its page follow it
to the end, and sees the standings the matchmaker reports; the exports download."""

from __future__ import annotations

import csv
import io
import json
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import StackConfig
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, TourneySite, screenshot, tournament_site

pytestmark = pytest.mark.slow  # starts the stack, the web app and Chromium


@pytest.fixture(scope="module")
def tsite(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TourneySite]:
    logs = tmp_path_factory.mktemp("web-tournaments")
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=f"wt{secrets.token_hex(4)}:",
        env={"OHELL_MATCH_LEASE_S": "1.5"},
        matchmaker_args=("--sweep-every", "0.5", "--tick", "0.02"),
        log_dir=str(logs),
        host_token=HOST_TOKEN,
        remote_worker=False,
    )
    with tournament_site(config) as site:
        yield site


def sign_in(site: TourneySite, page: Any) -> None:
    page.goto(site.url + "/host/tournaments")
    assert page.url.endswith("/host/login")  # behind the host login
    page.fill("input[name=token]", HOST_TOKEN)
    page.click("button:text('Sign in')")
    page.goto(site.url + "/host/tournaments")
    page.wait_for_selector("#create-tournament")


def test_host_creates_a_tournament_and_watches_it_finish(tsite: TourneySite, page: Any) -> None:
    sign_in(tsite, page)
    form = page.locator("#create-tournament")
    form.locator("input[name=tournament_id]").fill("cup")
    form.locator("textarea[name=entrants]").fill("builtin:strong\nbuiltin:heuristic=h1\nbuiltin:random")
    form.locator("input[name=deals]").fill("2")
    form.locator("textarea[name=options]").fill("hand_sizes=[5,4,3,2,1]")  # 6 games: seconds with the strong bot
    screenshot(page, "host-tournaments")
    form.locator("button").click()
    page.wait_for_url(f"{tsite.url}/tournaments/cup")
    assert page.locator("h1").inner_text() == "Tournament: cup"
    assert page.locator("#live").get_attribute("data-state") == "running"
    page.wait_for_selector("#live[data-state=finished]", timeout=25_000)  # the page follows it to the end
    assert int(page.locator("body").get_attribute("data-refreshes") or 0) >= 1  # fetched again, not reloaded
    assert page.locator("#state").inner_text() == "finished"
    assert "6/6 games" in page.locator("#progress-text").inner_text()
    assert page.locator("#standings").locator("xpath=preceding::h2[1]").inner_text() == "Final standings"

    reply = tsite.stub.GetTournament(tpb.GetTournamentRequest(tournament_id="cup"))
    rows = page.locator("#standings tbody tr")
    assert rows.count() == 3
    for row, standing in zip(rows.all(), reply.standings, strict=True):
        cells = row.locator("td").all_inner_texts()
        assert cells[1] == standing.entrant and cells[2] == f"{standing.mean_duplicate:+.2f}"
        assert cells[3] == f"[{standing.ci_low:+.2f}, {standing.ci_high:+.2f}]"
        assert cells[4] == (f"{standing.p_above_next:.3f}" if standing.HasField("p_above_next") else "")
    assert {standing.entrant for standing in reply.standings} == {"strong", "h1", "random"}
    assert page.locator("#tables tbody tr td").nth(3).inner_text() == "finished"
    assert page.locator("#resume").count() == 0  # nothing left to resume
    assert page.locator("#cancel").count() == 0  # the form shown while it ran went with its end
    screenshot(page, "tournament")
    visitor = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    try:  # what a visitor sees (docs/web-tournament.png): the same page, the menu's "Host sign-in"
        public = visitor.new_page()
        public.goto(f"{tsite.url}/tournaments/cup")
        assert public.locator("header nav a").all_inner_texts() == ["Ladders", "Tournaments", "Host sign-in"]
        assert public.locator("#standings tbody tr").count() == 3
        screenshot(public, "tournament-public")
    finally:
        visitor.close()

    with page.expect_download() as download:
        page.click("#export-csv")
    exported = list(csv.DictReader(io.StringIO(open(download.value.path()).read())))  # noqa: SIM115
    assert [r["entrant"] for r in exported] == [s.entrant for s in reply.standings]
    response = page.request.get(f"{tsite.url}/tournaments/cup/export.json")
    document = json.loads(response.body())
    assert document["finished"] and len(document["records"]) == 6 and set(document["deals"]) == {"r1t0"}

    # each game's replay, from its table's row: the hands dealt, drawn by the ladder matches' viewer
    page.goto(f"{tsite.url}/tournaments/cup")
    links = page.locator("#tables tbody tr[data-table=r1t0] td.replays a")
    assert links.all_inner_texts() == [f"d{deal}/r{turn}" for deal in range(2) for turn in range(3)]
    links.nth(4).click()
    page.wait_for_url(f"{tsite.url}/tournaments/cup/games/r1t0/d1/r1")
    assert page.locator("h1").inner_text() == "Replay: cup r1t0/d1/r1"
    record = document["records"]["r1t0/d1/r1"]
    page.wait_for_selector("#seats .seat .cards .c")
    for seat, dealt in enumerate(record["hands"][0]["deal"]):
        assert page.locator(f"#seats .seat[data-seat='{seat}'] .name").inner_text() == record["seats"][seat]["name"]
        assert (
            page.locator(f"#seats .seat[data-seat='{seat}'] .cards .c").evaluate_all(
                "cards => cards.map(c => c.dataset.card)"
            )
            == dealt
        )
    page.keyboard.press("End")
    assert page.locator("#scores tbody tr").count() == len(record["hands"])
    page.click("a:text('tournament cup')")
    page.wait_for_url(f"{tsite.url}/tournaments/cup")

    page.goto(tsite.url + "/tournaments")
    listed = page.locator("#tournaments tbody tr[data-tournament=cup] td").all_inner_texts()
    assert listed[0] == "cup" and listed[1] == "finished" and listed[3] == "3" and listed[6] == "6/6"
    screenshot(page, "tournaments")


def test_bad_form_shows_the_field_and_pages_need_a_session(tsite: TourneySite, page: Any) -> None:
    response = page.request.post(tsite.url + "/host/tournaments/new", form={"tournament_id": "sneaky", "csrf": "x"})
    assert response.status == 403
    assert page.request.get(tsite.url + "/tournaments/sneaky").status == 404
    sign_in(tsite, page)
    form = page.locator("#create-tournament")
    form.locator("input[name=tournament_id]").fill("bad")
    form.locator("textarea[name=entrants]").fill("builtin:strong\nbuiltin:no-such-bot\nbuiltin:random")
    form.locator("button").click()
    assert "no-such-bot" in page.locator("#error-message").inner_text()
    assert page.locator("textarea[name=entrants]").input_value().endswith("builtin:random")  # the form is kept
    form = page.locator("#create-tournament")
    form.locator("textarea[name=entrants]").fill("builtin:strong\nbuiltin:heuristic\nbuiltin:random")
    form.locator("input[name=seats]").fill("7")
    form.locator("button").click()
    assert "seats" in page.locator("#error-message").inner_text()
    assert page.request.get(tsite.url + "/tournaments/bad").status == 404
    assert page.request.get(tsite.url + "/tournaments/no-such/export.csv").status == 404


def test_an_id_taken_already_says_so(tsite: TourneySite, page: Any) -> None:
    """A second try after a creation the page could not wait for answered ALREADY_EXISTS: the page says
    that tournament exists and where, not just the status."""
    entrants = [tpb.TournamentEntrant(bot=bot) for bot in ("heuristic", "random", "strong")]
    request = tpb.CreateTournamentRequest(tournament=tpb.Tournament(tournament_id="taken", entrants=entrants, deals=1))
    tsite.stub.CreateTournament(request, metadata=auth_metadata(HOST_TOKEN))
    sign_in(tsite, page)
    form = page.locator("#create-tournament")
    form.locator("input[name=tournament_id]").fill("taken")
    form.locator("textarea[name=entrants]").fill("builtin:strong\nbuiltin:heuristic\nbuiltin:random")
    form.locator("button").click()
    shown = page.locator("#error-message").inner_text()
    assert "taken exists already" in shown and "/tournaments/taken" in shown


def test_the_host_cancels_a_running_tournament_from_its_page(tsite: TourneySite, page: Any) -> None:
    """A tournament that cannot finish (a connected entrant never online, no remote worker): the
    host types its id in the cancel form of its page; visitors see no form; a post without the
    session's CSRF token, or without the id typed, cancels nothing."""
    from arena.proto.ohell.v1 import matchmaker_pb2 as pb

    host = auth_metadata(HOST_TOKEN)
    agent = tsite.stub.RegisterAgent(pb.RegisterAgentRequest(name="never", kind=pb.AGENT_KIND_CONNECTED), metadata=host)
    entrants = [*(tpb.TournamentEntrant(bot=bot) for bot in ("heuristic", "random")), tpb.TournamentEntrant(
        agent_id=agent.agent.agent_id)]  # fmt: skip
    tourney = tpb.Tournament(tournament_id="stuck", entrants=entrants, deals=1, grace_seconds=0)
    tsite.stub.CreateTournament(tpb.CreateTournamentRequest(tournament=tourney), metadata=host)
    page.goto(tsite.url + "/tournaments/stuck")
    assert page.locator("#cancel").count() == 0  # not signed in
    assert page.request.post(tsite.url + "/host/tournaments/stuck/cancel", form={"confirm": "stuck"}).status == 403
    sign_in(tsite, page)
    forged = page.request.post(tsite.url + "/host/tournaments/stuck/cancel", form={"confirm": "stuck", "csrf": "x"})
    assert forged.status == 403
    page.goto(tsite.url + "/tournaments/stuck")
    page.locator("#cancel input[name=confirm]").fill("stuc")
    page.locator("#cancel button").click()
    assert "type the tournament's id (stuck)" in page.locator("#error-message").inner_text()
    state = tsite.stub.GetTournament(tpb.GetTournamentRequest(tournament_id="stuck")).progress.state
    assert state == tpb.TOURNAMENT_STATE_RUNNING
    page.goto(tsite.url + "/tournaments/stuck")
    page.locator("#cancel input[name=confirm]").fill("stuck")
    page.locator("#cancel button").click()
    page.wait_for_url(f"{tsite.url}/tournaments/stuck")
    assert page.locator("#state").inner_text() == "cancelled"
    assert page.locator("#standings").locator("xpath=preceding::h2[1]").inner_text() == "Final standings (cancelled)"
    assert page.locator("#tables tbody tr td").nth(3).inner_text() == "cancelled"
    assert page.locator("#cancel").count() == 0 and page.locator("#resume").count() == 0
    state = tsite.stub.GetTournament(tpb.GetTournamentRequest(tournament_id="stuck")).progress.state
    assert state == tpb.TOURNAMENT_STATE_CANCELLED
    page.goto(tsite.url + "/tournaments")
    assert page.locator("#tournaments tbody tr[data-tournament=stuck] td").all_inner_texts()[1] == "cancelled"

    # the host's list offers the same form beside each running tournament (it had only Resume)
    tourney.tournament_id = "stuck2"
    tsite.stub.CreateTournament(tpb.CreateTournamentRequest(tournament=tourney), metadata=host)
    page.goto(tsite.url + "/host/tournaments")
    assert page.locator("#host-tournaments tr[data-tournament=stuck] form.cancel").count() == 0  # it has ended
    row = page.locator("#host-tournaments tr[data-tournament=stuck2]")
    row.locator("form.cancel input[name=confirm]").fill("stuck2")
    row.locator("form.cancel button").click()
    page.wait_for_url(f"{tsite.url}/tournaments/stuck2")
    assert page.locator("#state").inner_text() == "cancelled"
