"""The web app in a real browser (Debian's Chromium through Playwright) against the real stack."""

from __future__ import annotations

import json
import re
import threading
from types import SimpleNamespace
from typing import Any

import grpc
import pytest

from arena.ladder.matchplay import PacedBot
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from arena.rpc.auth import auth_metadata
from arena.sdk import connect
from ohell.bots import make_bot
from services.web.pages import HERE, templates

from .conftest import HOST_TOKEN, LADDER, Site, screenshot, wait_until

pytestmark = pytest.mark.slow  # starts the whole stack, the web app and Chromium


def test_leaderboard_agent_and_match_list(site: Site, page: Any) -> None:
    page.goto(site.url + "/")
    page.click(f"#ladders a:text-is('{LADDER}')")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == len(site.agents)
    board = site.stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder=LADDER)).standings
    first = rows.nth(0).locator("td")
    assert first.nth(1).inner_text() == board[0].name and first.nth(2).inner_text() == f"{board[0].ordinal:.2f}"
    assert first.nth(5).inner_text() == str(board[0].games)
    screenshot(page, "leaderboard")

    def history() -> Any:
        request = pb.GetRatingHistoryRequest(ladder=LADDER, agent_id=board[0].agent_id)
        return site.stub.GetRatingHistory(request).points

    wait_until(lambda: len(history()) == board[0].games, 30, "the leader's matches to be archived")
    rows.nth(0).locator("a").click()
    page.wait_for_selector("#standing")
    assert page.locator("h1").inner_text() == board[0].name
    chart = page.locator("#chart")
    assert chart.get_attribute("data-points") == str(board[0].games)  # one point per archived rated match
    assert chart.locator("svg polyline").count() == 1 and chart.locator("svg circle").count() == board[0].games
    top = max(point.mu_after + point.sigma_after for point in history())  # the band's top: mu + sigma
    assert chart.locator("svg text").first.text_content() == f"{top:.2f}"  # the chart's scale is the RPC's
    recent = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, agent_id=board[0].agent_id, page_size=12))
    shown = page.locator("#matches tbody tr a[href^='/matches/']")
    assert [shown.nth(i).inner_text() for i in range(shown.count())] == [m.match_id for m in recent.matches]
    screenshot(page, "agent")

    page.goto(f"{site.url}/matches?ladder={LADDER}")
    listed = page.locator("#matches tbody tr")
    reply = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=50))
    assert listed.count() == len(reply.matches) and reply.total_size == len(reply.matches)
    assert page.locator("#total").inner_text().startswith(f"{reply.total_size} finished matches")
    assert listed.nth(0).locator("a").first.inner_text() == reply.matches[0].match_id
    first_totals = listed.nth(0).locator("td").nth(2).inner_text()
    assert all(str(total) in first_totals for total in reply.matches[0].totals)
    assert listed.nth(0).locator("td").last.inner_text() == str(sum(reply.matches[0].faults))
    screenshot(page, "matches")

    agent = board[-1].agent_id  # filtered by agent: the archive's count for that agent
    page.goto(f"{site.url}/matches?ladder={LADDER}&agent={agent}")
    mine = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, agent_id=agent, page_size=50))
    assert mine.total_size == board[-1].games and page.locator("#matches tbody tr").count() == mine.total_size
    assert page.locator("#total").inner_text().startswith(f"{mine.total_size} finished match")
    assert page.locator("h1").inner_text() == f"Matches of {LADDER} with {board[-1].name}"
    page.goto(f"{site.url}/matches?ladder={LADDER}&agent={agent}&state=running")  # none: named all the same
    assert page.locator("h1").inner_text() == f"Matches of {LADDER} with {board[-1].name}"


def test_replay_steps_to_the_records_totals(site: Site, page: Any) -> None:
    match = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=1)).matches[0]
    record = json.loads(site.stub.GetMatch(pb.GetMatchRequest(match_id=match.match_id)).record_json)
    page.goto(f"{site.url}/matches/{match.match_id}")
    assert page.locator("body").get_attribute("data-step") == "0"
    page.click("#next")
    page.keyboard.press("ArrowRight")
    assert page.locator("body").get_attribute("data-step") == "2"
    assert page.locator("#caption").inner_text().startswith(record["seats"][record["hands"][0]["events"][1][1]]["name"])
    page.keyboard.press("ArrowLeft")
    assert page.locator("body").get_attribute("data-step") == "1"
    for _ in range(len(record["seats"]) + 2):  # the bids made and three cards on the table
        page.keyboard.press("ArrowRight")
    assert page.locator("#seats .played .c").count() == 3
    screenshot(page, "replay")
    steps = int(page.locator("#scrub").get_attribute("max"))
    for _ in range(steps):  # step to the end one frame at a time
        page.click("#next")
    assert page.locator("body").get_attribute("data-at-end") == "true"
    shown = [int(page.locator(f"#total-{seat}").inner_text()) for seat in range(len(record["seats"]))]
    assert shown == record["totals"]
    assert page.locator("#scores tbody tr").count() == len(record["hands"])
    assert page.locator("#caption").inner_text().startswith("match over")
    page.keyboard.press("Home")
    assert page.locator("body").get_attribute("data-step") == "0"
    page.focus("#next")  # Space presses the focused button, as anywhere: it played the replay instead
    page.keyboard.press(" ")
    assert page.locator("body").get_attribute("data-step") == "1" and page.locator("#play").inner_text() == "▶ play"
    page.click("#play")  # plays on by itself
    wait_until(lambda: int(page.locator("body").get_attribute("data-step")) > 1, 10, "the replay to play")


def test_live_match_changes(site: Site, page: Any) -> None:
    stub = site.stub
    rules = rules_pb2.Rules(preset="classic", hand_sizes=[4, 3, 2, 1])
    ladder = pb.Ladder(
        name="live", rules=rules, seats=3, house_fill=True, fill_after_seconds=0.2, house_bots=["random"]
    )
    host = auth_metadata(HOST_TOKEN)
    stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
    reply = stub.RegisterAgent(pb.RegisterAgentRequest(name="slowpoke", kind=pb.AGENT_KIND_CONNECTED), metadata=host)
    agent_id, token = reply.agent.agent_id, reply.token
    bot = PacedBot(make_bot("random", 7), 300)  # about 4 s of its decisions per match
    threading.Thread(target=connect, args=(bot, site.stack.engine_address, token), daemon=True).start()
    watch = stub.WatchQueue(pb.WatchQueueRequest(ladder="live", agent_id=agent_id), metadata=auth_metadata(token))
    try:
        seated = next(iter(watch))
        running = stub.ListMatches(pb.ListMatchesRequest(ladder="live", state="running")).matches
        assert seated.match_id in [m.match_id for m in running]
        page.goto(f"{site.url}/ladders/live")
        page.click(f"a.live-link:text-is('{seated.match_id}')")
        page.wait_for_selector("#seats .seat")
        mine = page.locator("#seats .seat .name a", has_text="slowpoke")  # each seat links its agent's page
        assert mine.get_attribute("href") == f"/agents/{agent_id}?ladder=live"
        seen = int(page.locator("body").get_attribute("data-events") or 0)
        wait_until(lambda: int(page.locator("body").get_attribute("data-events") or 0) > seen + 3, 20, "new events")
        assert page.locator("#seats .cards").count() == 0  # no hand is ever drawn live: only played cards
        # who took the trick is said by its seat (it was said only in the caption above the table); the
        # caption of a trick won may last a few ms (a house bot leads at once): each one is recorded
        page.evaluate("""() => {
            window.trickWins = [];
            new MutationObserver(() => {
                const caption = document.getElementById("caption").textContent;
                if (!caption.endsWith(" wins the trick")) return;
                const seats = [...document.querySelectorAll("#seats .seat")];
                const scored = document.querySelectorAll("#scores tbody tr").length > 0;
                window.trickWins.push([caption,
                    seats.map((s) => [s.querySelector(".name").textContent, s.querySelector(".doing").textContent]),
                    document.getElementById("no-scores")?.hidden === scored]);
            }).observe(document.getElementById("caption"), {childList: true, characterData: true, subtree: true});
        }""")
        wait_until(lambda: page.evaluate("window.trickWins.length") > 0, 30, "a trick won on the page")
        caption, seats, scores_said = page.evaluate("window.trickWins[0]")
        assert scores_said, "an empty score table says no hand has ended, and only then"
        assert [name for name, doing in seats if doing == "wins the trick"] == [caption.removesuffix(" wins the trick")]
        screenshot(page, "live")
        page.wait_for_selector("#done:not([hidden])", timeout=60_000)
        assert page.locator("#no-scores").is_hidden() and page.locator("#scores tbody tr").count() == 4
        assert page.locator("#done #ladder-link").get_attribute("href") == "/ladders/live"
        screenshot(page, "live-done")
        totals = [int(t) for t in page.locator("#seats .total").all_inner_texts()]
        record = json.loads(stub.GetMatch(pb.GetMatchRequest(match_id=seated.match_id)).record_json)
        assert totals == record["totals"]
    finally:
        watch.cancel()


def test_the_live_view_of_no_match_says_so(site: Site, page: Any) -> None:
    """A mistyped id waited for the engine (10 s), then said the match had no live feed because
    built-in bots play inside a worker, and where its replay would be."""
    page.goto(f"{site.url}/live/no-such-match")
    wait_until(lambda: page.locator("#status").inner_text() != "connecting…", 30, "the engine's answer")
    assert page.locator("#status").inner_text() == "no match with this id is being played"
    assert page.locator("#later").is_hidden() and page.locator("#done").is_hidden()


def test_host_creates_a_ladder_and_registers_agents(site: Site, page: Any) -> None:
    page.goto(site.url + "/host")
    assert page.url.endswith("/host/login")
    page.fill("input[name=token]", "not-the-token")
    page.click("button:text('Sign in')")
    assert page.locator("#error-message").inner_text() == "wrong host token"
    page.fill("input[name=token]", HOST_TOKEN)
    page.click("button:text('Sign in')")
    page.wait_for_url(site.url + "/host")  # the click returns before the host page has come: the checks read it
    page.wait_for_selector("#create-ladder")

    form = page.locator("#create-ladder")
    form.locator("input[name=name]").fill("class1")
    form.locator("select[name=preset]").select_option("classic")
    form.locator("input[name=seats]").fill("5")
    form.locator("button").click()
    assert page.locator("#message").inner_text() == "ladder class1 created"
    ladder = stub_ladder(site, "class1")
    assert ladder.seats == 5 and ladder.rules.preset == "classic" and not ladder.house_fill

    # house bots given fill tables, as with `ohell ladder create --house-bots`: with the form's
    # "fill tables" box left unticked they were stored and never played
    form.locator("input[name=name]").fill("filled")
    form.locator("input[name=house_bots]").fill("heuristic")
    form.locator("button").click()
    assert page.locator("#message").inner_text() == "ladder filled created"
    ladder = stub_ladder(site, "filled")
    assert list(ladder.house_bots) == ["heuristic"] and ladder.house_fill

    form = page.locator("#register-agents")
    form.locator("textarea[name=names]").fill("alice\nbob")
    form.locator("button").click()
    assert page.locator("#tokens tbody tr").count() == 2
    href = page.locator("#download-tokens").get_attribute("href")
    assert href.startswith("data:text/csv;base64,")
    with page.expect_download() as download:
        page.click("#download-tokens")
    lines = open(download.value.path()).read().splitlines()  # noqa: SIM115
    assert lines[0] == "name,agent_id,token" and [line.split(",")[0] for line in lines[1:]] == ["alice", "bob"]
    name, agent_id, token = lines[1].split(",")
    reply = site.stub.SetAgentVersion(  # the token handed out is the agent's
        pb.SetAgentVersionRequest(agent_id=agent_id, version="v2"), metadata=auth_metadata(token)
    )
    assert reply.agent.name == "alice"
    screenshot(page, "host")

    form = page.locator("#register-agents")
    form.locator("textarea[name=names]").fill("alice")  # taken
    form.locator("button").click()
    assert "alice" in page.locator("#error-message").inner_text()


def test_the_host_pauses_and_resumes_a_ladder_with_the_one_button_that_applies(site: Site, page: Any) -> None:
    ladder = pb.Ladder(name="pausable", rules=rules_pb2.Rules(preset="classic"), seats=4)
    site.stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=auth_metadata(HOST_TOKEN))
    sign_in(site, page)
    card = page.locator("section[data-ladder=pausable]")
    for button, state, paused in (("Pause", "Paused", True), ("Resume", "Running", False)):
        assert card.locator(".ladder-state button").all_inner_texts() == [button]
        card.locator(".ladder-state button").click()
        assert page.locator("#message").inner_text() == f"ladder pausable: {button.lower()} done"
        assert card.locator(".ladder-state").inner_text().startswith(state)
        assert stub_ladder(site, "pausable").paused is paused
        if paused:
            screenshot(page, "host-paused")


def test_the_host_deletes_a_ladder_by_typing_its_name(site: Site, page: Any) -> None:
    """The host page offered no way to delete a ladder (only ``ohell ladder delete``)."""
    ladder = pb.Ladder(name="doomed", rules=rules_pb2.Rules(preset="classic"), seats=4)
    site.stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=auth_metadata(HOST_TOKEN))
    sign_in(site, page)
    card = page.locator("section[data-ladder=doomed]")
    card.get_by_label("type its name").fill("doome")
    card.locator("button:text('Delete ladder')").click()
    assert page.locator("#error-message").inner_text() == "type the ladder's name (doomed) to delete it"
    assert stub_ladder(site, "doomed").name == "doomed"
    card.get_by_label("type its name").fill("doomed")
    card.locator("button:text('Delete ladder')").click()
    assert page.locator("#message").inner_text().startswith("ladder doomed deleted")
    assert card.count() == 0
    with pytest.raises(grpc.RpcError) as gone:
        site.stub.GetLadder(pb.GetLadderRequest(name="doomed"))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_seat_count_no_request_holds_is_the_forms_error(site: Site, page: Any) -> None:
    """The form's own number check is the browser's; a posted seat count past what the request
    message holds was a 500 (protobuf's ValueError) instead of the form's error."""
    sign_in(site, page)
    csrf = page.locator("#create-ladder input[name=csrf]").get_attribute("value")
    for seats in ("99999999999", "-1"):
        form = {"csrf": csrf, "name": "huge", "preset": "classic", "seats": seats}
        response = page.request.post(site.url + "/host/ladders", form=form)
        said = "ladder not created: seats: &#39;" + seats + "&#39; is not a whole number from 3 to 7"
        assert response.status == 400 and said in response.text(), response.text()[:300]


def sign_in(site: Site, page: Any) -> None:
    """Sign in as the host: the page is then the host page."""
    page.goto(site.url + "/host/login")
    page.fill("input[name=token]", HOST_TOKEN)
    page.click("button:text('Sign in')")
    page.wait_for_url(site.url + "/host")  # the click returns before the host page has come: the checks read it


def stub_ladder(site: Site, name: str) -> Any:
    try:
        return site.stub.GetLadder(pb.GetLadderRequest(name=name)).ladder
    except grpc.RpcError as error:
        raise AssertionError(f"ladder {name} was not created: {error.details()}") from None


def test_forms_need_a_host_session(site: Site, page: Any) -> None:
    response = page.request.post(site.url + "/host/ladders", form={"name": "sneaky", "csrf": "x"})
    assert response.status == 403
    with pytest.raises(grpc.RpcError):
        site.stub.GetLadder(pb.GetLadderRequest(name="sneaky"))


def test_the_live_view_of_a_finished_match_is_its_replay(site: Site, page: Any) -> None:
    """It showed the live view, which for a finished match only drew the end."""
    match = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=1)).matches[0]
    page.goto(f"{site.url}/live/{match.match_id}")
    assert page.url == f"{site.url}/matches/{match.match_id}"
    assert page.locator("#scrub").count() == 1


def test_the_host_registers_built_in_agents_straight_onto_a_ladder(site: Site, page: Any) -> None:
    """Registered built-in agents never played: only a JoinQueue with each one's token queues it,
    and the host page made none."""
    rules = rules_pb2.Rules(preset="classic", hand_sizes=[2])
    ladder = pb.Ladder(name="hosted", rules=rules, seats=3)
    site.stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=auth_metadata(HOST_TOKEN))
    sign_in(site, page)
    form = page.locator("#register-agents")
    form.locator("textarea[name=names]").fill("hb-1\nhb-2\nhb-3")
    form.locator("select[name=kind]").select_option("builtin")
    form.locator("select[name=bot]").select_option("random")
    form.locator("select[name=join]").select_option("hosted")
    form.locator("button").click()
    assert page.locator("#message").inner_text().startswith("registered 3 agent(s), queued on ladder hosted")

    def played() -> set[str]:
        board = site.stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder="hosted"))
        return {standing.name for standing in board.standings if standing.games > 0}

    wait_until(lambda: played() == {"hb-1", "hb-2", "hb-3"}, 60, "the queued agents' first match")
    form = page.locator("#register-agents")
    form.locator("textarea[name=names]").fill("hc-1")
    form.locator("select[name=kind]").select_option("connected")
    form.locator("select[name=join]").select_option("hosted")
    form.locator("button").click()
    assert "a connected agent queues itself" in page.locator("#error-message").inner_text()


def test_the_match_lists_any_ladder_without_an_agent_asks_for_one(site: Site, page: Any) -> None:
    """The form offers ladder "any"; chosen with no agent id it gave a 400 error page."""
    response = page.goto(f"{site.url}/matches?ladder=&agent=&state=")
    assert response.status == 200
    assert page.locator("#choose").inner_text().startswith("Choose a ladder")
    page.locator("select[name=ladder]").select_option(LADDER)
    page.click("button:text('Show')")
    assert page.locator("#matches tbody tr").count() > 0


def luminance(css: str) -> float:
    """The relative luminance (WCAG 2) of an opaque ``rgb(r, g, b)``."""
    channels = [int(c) / 255 for c in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_buttons_that_cannot_be_undone_look_dangerous_and_stay_readable(page: Any) -> None:
    """'Cancel tournament' and 'Delete ladder' were filled blue like 'Pause' or 'Sign out'. The pages
    are rendered from their templates and served with the app's stylesheets (no stack needed)."""
    ladder = SimpleNamespace(
        name="class", preset="classic", seats=4, matches=0, standings=[], paused=False, settings={}
    )
    t = SimpleNamespace(id="cup", state="running", round=1, rounds=1, tables_done=0, tables=1, games_done=0,
                        games_total=6, finished="", percent=0, format="round robin", entrants=3, seats=3, deals=1,
                        preset="classic", created="")  # fmt: skip
    pages = {
        "/host": ("host.html", dict(ladders=[ladder], presets=["classic"], bots=["random"])),
        "/host/tournaments": ("host_tournaments.html", dict(tournaments=[t], presets=["classic"], bots=["random"])),
        "/tournaments/cup": (
            "tournament.html",
            dict(t=t, grace="30", entrants=[], standings=[], tables=[], tables_page="", tables_next=""),
        ),
    }

    def serve(route: Any) -> None:
        path = route.request.url.removeprefix("http://web.test")
        if path.startswith("/static/"):
            route.fulfill(path=str(HERE / path.lstrip("/")), content_type="text/css")
            return
        name, context = pages[path]
        html = templates.env.get_template(name).render(host_session=True, csrf="x", form={}, **context)
        route.fulfill(body=html, content_type="text/html")

    page.route("http://web.test/**", serve)
    look = "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.color, s.borderTopColor]; }"
    page.goto("http://web.test/host")
    plain = page.locator("button:text-is('Pause')").evaluate(look)
    assert page.locator("button:text-is('Sign out')").evaluate(look) == plain
    for path, label in (
        ("/host", "Delete ladder"),
        ("/host/tournaments", "Cancel"),
        ("/tournaments/cup", "Cancel tournament"),
    ):
        page.goto("http://web.test" + path)
        button = page.locator(f"button:text-is('{label}')")
        background, color, border = button.evaluate(look)
        assert (background, color) != tuple(plain[:2]) and border != plain[2], (path, label)
        assert contrast(background, color) >= 4.5, (path, label, background, color)
        button.hover()
        background, color, _ = button.evaluate(look)
        assert contrast(background, color) >= 4.5, (path, label, "pointed at", background, color)


def built_in_agents(site: Site, ladder: str, bots: list[str], hand_sizes: list[int]) -> dict[str, str]:
    """A new ladder with one registered built-in agent per bot, none queued: agent id -> its token."""
    host = auth_metadata(HOST_TOKEN)
    rules = rules_pb2.Rules(preset="classic", hand_sizes=hand_sizes)
    site.stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name=ladder, rules=rules, seats=3)), metadata=host)
    tokens = {}
    for index, bot in enumerate(bots):
        request = pb.RegisterAgentRequest(name=f"{ladder}-{bot}-{index}", kind=pb.AGENT_KIND_BUILTIN, bot=bot)
        reply = site.stub.RegisterAgent(request, metadata=host)
        tokens[reply.agent.agent_id] = reply.token
    return tokens


def queue(site: Site, ladder: str, tokens: dict[str, str], join: bool) -> None:
    for agent_id, token in tokens.items():
        request = (pb.JoinQueueRequest if join else pb.LeaveQueueRequest)(ladder=ladder, agent_id=agent_id)
        (site.stub.JoinQueue if join else site.stub.LeaveQueue)(request, metadata=auth_metadata(token))


def replaced(page: Any) -> int:
    """How many times live-part.js has put a fresh live part in place on this page."""
    return int(page.locator("body").get_attribute("data-replaced") or 0)


def test_the_leaderboard_and_agent_pages_follow_a_ladder_without_reloading(site: Site, page: Any, browser: Any) -> None:
    """Both stayed as first served while the ladder played: only a reload showed new matches."""
    tokens = built_in_agents(site, "follow", ["random", "random", "heuristic"], [3, 2, 1])
    page.set_viewport_size({"width": 390, "height": 700})
    page.goto(f"{site.url}/ladders/follow")
    assert page.locator("#leaderboard tbody").inner_text().startswith("No agent has played")
    page.evaluate("window.servedOnce = true")  # gone if the page were loaded again
    queue(site, "follow", tokens, join=True)
    try:
        rows = page.locator("#leaderboard tbody tr[data-agent]")
        wait_until(lambda: rows.count() == 3, 30, "the agents' rows on the page")
        games = lambda: [int(g) for g in rows.locator("td:nth-child(6)").all_inner_texts()]  # noqa: E731
        seen = sum(games())
        wait_until(lambda: sum(games()) > seen, 30, "more games on the page")

        # at 390 px the table scrolls sideways: the visitor's scroll and focus outlive each refresh
        table = page.locator("#live .scroll").first
        assert table.evaluate("el => el.scrollWidth > el.clientWidth")
        table.evaluate("el => { el.scrollLeft = 120; }")
        link = rows.first.locator("a")
        href = link.get_attribute("href")
        link.focus()
        before = replaced(page)
        wait_until(lambda: replaced(page) > before + 1, 30, "two more refreshes")
        assert page.locator("#live .scroll").first.evaluate("el => el.scrollLeft") == 120
        assert page.evaluate("document.activeElement.getAttribute('href')") == href
        assert page.evaluate("window.servedOnce") is True

        agent_id = next(iter(tokens))
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{site.url}/agents/{agent_id}?ladder=follow")
        page.evaluate("window.servedOnce = true")
        shown = lambda: int(page.locator("#standing div:nth-child(4) dd").inner_text())  # noqa: E731
        first = shown()
        wait_until(lambda: shown() > first, 30, "the agent's games to grow on its page")
        assert page.evaluate("window.servedOnce") is True
    finally:
        queue(site, "follow", tokens, join=False)

    def standing() -> Any:
        reply = site.stub.GetAgent(pb.GetAgentRequest(agent_id=agent_id, ladder="follow"))
        return reply.standing

    def agrees() -> bool:  # the ladder at rest: the page ends with what the matchmaker says
        if site.stub.ListMatches(pb.ListMatchesRequest(ladder="follow", state="running")).matches:
            return False
        history = site.stub.GetRatingHistory(pb.GetRatingHistoryRequest(ladder="follow", agent_id=agent_id)).points
        chart = page.locator("#chart")
        return (
            shown() == standing().games
            and len(history) == standing().games
            and chart.count() == 1
            and chart.get_attribute("data-points") == str(standing().games)
        )

    wait_until(agrees, 60, "the agent page to show the ladder at rest, chart included")
    assert page.locator("#matches tbody tr a[href^='/matches/']").first.inner_text() == (
        site.stub.ListMatches(pb.ListMatchesRequest(ladder="follow", agent_id=agent_id, page_size=1))
        .matches[0]
        .match_id
    )
    screenshot(page, "agent-followed")

    plain = browser.new_context(java_script_enabled=False)  # without JavaScript: the same pages, whole
    try:
        still = plain.new_page()
        still.goto(f"{site.url}/ladders/follow")
        assert still.locator("#leaderboard tbody tr[data-agent]").count() == 3
        still.goto(f"{site.url}/agents/{agent_id}?ladder=follow")
        assert int(still.locator("#standing div:nth-child(4) dd").inner_text()) == standing().games
    finally:
        plain.close()


def test_the_live_view_of_a_built_in_match_says_at_once_it_has_no_feed_and_links_its_replay(
    site: Site, page: Any
) -> None:
    """Its 'live now' link on the leaderboard led to 'connecting…' for 10 s, then 'no live feed' and
    an address to come back to: built-in bots only play inside a worker, and the page never said
    when the match was over."""
    tokens = built_in_agents(site, "inworker", ["strong", "strong", "strong"], list(range(13, 0, -1)))
    page.goto(f"{site.url}/ladders/inworker")
    queue(site, "inworker", tokens, join=True)
    try:
        for _ in range(5):  # a match may end between the leaderboard's refresh and the click: the next one
            link = page.locator("a.live-link").first
            link.wait_for(timeout=60_000)  # the leaderboard follows the ladder: the match in play appears
            match_id = link.inner_text()
            link.click()
            page.wait_for_selector("#status")
            if page.url == f"{site.url}/live/{match_id}":
                break
            page.goto(f"{site.url}/ladders/inworker")  # it was over: its replay opened instead
        else:
            raise AssertionError("no match of the ladder was still in play when its live view opened")
    finally:
        queue(site, "inworker", tokens, join=False)
    # said at once, not after the engine's 10 s: within 5 s of the page (its first answer may take a
    # moment on a loaded machine: 'connecting…' was read before it came, at load 6)
    page.wait_for_function("document.getElementById('status').textContent !== 'connecting…'", timeout=5_000)
    status = page.locator("#status").inner_text()
    if status != "finished":
        assert status == "waiting for the match to end"
        assert page.locator("#board").is_hidden()
        screenshot(page, "live-no-feed")
    said = page.locator("#no-feed").inner_text()
    assert said.startswith("Built-in bots only (inworker-strong-") and "no card-by-card feed" in said
    page.wait_for_selector("#done:not([hidden])", timeout=120_000)
    assert page.locator("#status").inner_text() == "finished"
    assert site.stub.GetMatch(pb.GetMatchRequest(match_id=match_id)).record_json  # over indeed
    page.click(f"#done a[href='/matches/{match_id}']")
    assert page.locator("#scrub").count() == 1
