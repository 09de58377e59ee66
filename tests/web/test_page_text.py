"""What pages say, rendered from their templates: a list with nothing in it yet says so instead of
showing a table of headers with no rows (a fresh ``ohell up``: no ladder, no tournament; a new
ladder: no standings); no page makes the browser ask for an icon the app does not serve; the live
view's state is set apart from the sentence before it."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from services.web import views
from services.web.pages import templates


def render(name: str, **context: object) -> str:
    return templates.env.get_template(name).render(host_session=False, **context)


def bare_tables(html: str) -> list[str]:
    """Tables whose body holds no row."""
    return re.findall(r"<table[^>]*>(?:(?!</table>).)*<tbody>\s*</tbody>", html, flags=re.S)


def test_no_ladder_and_no_tournament_show_a_sentence_and_no_table() -> None:
    ladders = render("ladders.html", ladders=[])
    assert "No ladder yet" in ladders and "<table" not in ladders
    tournaments = render("tournaments.html", tournaments=[], next_page=None)
    assert "No tournament yet" in tournaments and "<table" not in tournaments


def test_a_ladder_with_no_standings_says_so() -> None:
    ladder = SimpleNamespace(name="class", preset="classic", seats=4, matches=0)
    board = render("leaderboard.html", ladder=ladder, rows=[], waiting=0, running=[])
    assert "No agent has played on this ladder yet" in board and not bare_tables(board)
    host = render(
        "host.html",
        ladders=[
            SimpleNamespace(name="class", preset="classic", seats=4, matches=0, standings=[], paused=False, settings={})
        ],
        presets=["classic"],
        bots=["random"],
        csrf="x",
    )
    assert "No agent has played yet" in host and not bare_tables(host)


def test_pages_name_their_icon() -> None:
    """Without one the browser asked for /favicon.ico on the first page: a 404 in the app's log and
    an error in the browser's console."""
    assert '<link rel="icon" href="data:,">' in render("ladders.html", ladders=[])


def test_the_live_views_state_is_set_apart() -> None:
    """It read "a card appears when it is played. finished"."""
    page = render("live.html", match=None, match_id="m-1", seats=[])
    assert 'played · <span id="status">' in page


def test_the_host_page_offers_the_one_ladder_action_that_applies() -> None:
    """It offered Pause and Resume for every ladder, paused or not, and said neither."""
    ladders = [
        SimpleNamespace(name=name, preset="classic", seats=4, matches=0, standings=[], paused=paused, settings={})
        for name, paused in (("running", False), ("stopped", True))
    ]
    host = render("host.html", ladders=ladders, presets=["classic"], bots=["random"], csrf="x")
    assert "/host/ladders/running/pause" in host and "/host/ladders/running/resume" not in host
    assert "/host/ladders/stopped/resume" in host and "/host/ladders/stopped/pause" not in host
    assert "Running: tables are formed" in host and "Paused: no new tables are formed" in host


def test_a_ladder_matchs_live_view_links_back_to_its_ladder_when_it_ends() -> None:
    """Once the match was over the live view offered its replay only."""
    match = SimpleNamespace(match_id="main-7", ladder="main")
    assert 'id="ladder-link" href="/ladders/main"' in render("live.html", match=match, seats=["a", "b", "c"])
    assert "ladder-link" not in render("live.html", match=None, match_id="duel-1", seats=[])


def test_the_host_page_counts_one_match_in_the_singular() -> None:
    ladders = [
        SimpleNamespace(name=name, preset="classic", seats=4, matches=count, standings=[], paused=False, settings={})
        for name, count in (("one", 1), ("two", 2))
    ]
    host = render("host.html", ladders=ladders, presets=["classic"], bots=["random"], csrf="x")
    assert "4 seats, 1 match<" in host and "4 seats, 2 matches<" in host


def test_a_tournaments_page_shows_a_page_of_its_tables_with_links_to_the_others() -> None:
    """GetTournament gives its tables a page at a time (a tournament may have 6,800): the page says
    how many of them it shows and links to the next ones, and its live part keeps to that page."""
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    progress = tpb.TournamentProgress(state=tpb.TOURNAMENT_STATE_RUNNING, tables=150)
    tables = [tpb.TournamentTable(table_id=f"r1t{n}", round=1) for n in range(150)]
    first = tpb.GetTournamentResponse(
        tournament=tpb.Tournament(tournament_id="big"),
        progress=progress,
        tables=tables[:100],
        next_table_page_token="100",
    )
    html = render("_tournament_live.html", **tv.detail(first))
    assert "100 of the 150 tables here." in html and 'href="/tournaments/big?tables=100">Next tables' in html
    assert "First tables" not in html and 'data-live="/tournaments/big/live"' in html
    last = tpb.GetTournamentResponse(tournament=first.tournament, progress=progress, tables=tables[100:])
    html = render("_tournament_live.html", **tv.detail(last, "100"))
    assert "50 of the 150 tables here." in html and 'href="/tournaments/big">First tables' in html
    assert "Next tables" not in html and 'data-live="/tournaments/big/live?tables=100"' in html
    whole = tpb.GetTournamentResponse(tournament=first.tournament, progress=progress, tables=tables[:3])
    assert "table-pages" not in render("_tournament_live.html", **tv.detail(whole))


def test_a_finished_tournaments_page_stays_small_however_many_games_its_tables_have() -> None:
    """100 tables of 50 deal sets x 7 rotations linked 35,000 replays from one page (1.9 MiB): a table
    of more than 12 games links its own page of them; one of 12 keeps its games inline."""
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    def table(table_id: str, deals: int, seats: int) -> tpb.TournamentTable:
        games = [f"{table_id}/d{deal}/r{turn}" for deal in range(deals) for turn in range(seats)]
        return tpb.TournamentTable(table_id=table_id, round=1, state="finished", game_ids=games)

    ended = tpb.TournamentProgress(state=tpb.TOURNAMENT_STATE_FINISHED, tables=101)
    reply = tpb.GetTournamentResponse(
        tournament=tpb.Tournament(tournament_id="big"),
        progress=ended,
        tables=[table("r1t0", 4, 3), *(table(f"r1t{n}", 50, 7) for n in range(1, 101))],
    )
    html = render("_tournament_live.html", **tv.detail(reply))
    assert len(html) < 100_000, len(html)
    inline = re.findall(r'href="/tournaments/big/games/([^"]+)"', html)
    assert inline == [f"r1t0/d{deal}/r{turn}" for deal in range(4) for turn in range(3)]
    assert re.findall(r'<a class="table-games" href="/tournaments/big/tables/(r1t\d+)">350 games</a>', html) == [
        f"r1t{n}" for n in range(1, 101)
    ]


def test_a_table_waiting_for_a_connected_entrant_names_it_and_until_when() -> None:
    """A table waiting out a connected entrant's grace period read only 'running'."""
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    until_ms = 1_796_540_000_000
    waiting = tpb.TournamentTable(table_id="r1t0", state="running", waiting_for=["ghost"], waiting_until_ms=until_ms)
    until = time.strftime("%H:%M:%S UTC", time.gmtime(until_ms / 1000))
    assert tv.table_row(waiting)["state"].startswith(
        f"running: waits for ghost (connected, not online) until {until} ("
    )
    assert tv.table_row(tpb.TournamentTable(table_id="r1t1", state="running"))["state"] == "running"


def test_an_entrant_away_is_named_with_since_when_and_the_table_it_forfeited() -> None:
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    since_ms = 1_796_540_000_000
    away = tpb.TournamentAway(entrant="ghost", since_ms=since_ms, table_id="r1t0")
    html = render("_tournament_live.html", **tv.detail(tpb.GetTournamentResponse(away=[away])))
    since = time.strftime("%H:%M:%S UTC", time.gmtime(since_ms / 1000))
    assert (
        f'<p class="meta away">ghost (connected) away since {since}: forfeited table r1t0 after waiting for it;'
        " its next tables forfeit it without waiting while it is not online</p>"
    ) in html
    assert "away since" not in render("_tournament_live.html", **tv.detail(tpb.GetTournamentResponse()))


def test_a_standing_without_an_interval_says_so_and_draws_its_mean_alone() -> None:
    """An entrant with one deal has no interval (GetTournament leaves ci_low/ci_high unset): the page
    read the unset fields as [+0.00, +0.00] and drew a bar there."""
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    standings = [
        tpb.TournamentStanding(rank=1, entrant="a", mean_duplicate=4.0, ci_low=1.0, ci_high=7.0, p_above_next=0.9),
        tpb.TournamentStanding(rank=2, entrant="b", mean_duplicate=-6.0),
    ]
    rows = tv.standing_rows(standings)
    assert [row["ci"] for row in rows] == ["[+1.00, +7.00]", "needs 2 deals"]
    assert rows[1]["bar_width"] == 0 and rows[1]["mark"] == 0.0 and rows[0]["bar_left"] > 0  # the scale reaches -6
    html = render("_tournament_live.html", **tv.detail(tpb.GetTournamentResponse(standings=standings)))
    assert "[+0.00, +0.00]" not in html and "needs 2 deals" in html


def test_running_matches_are_listed_by_when_they_started() -> None:
    """The list of running matches headed its time column "finished" over each match's start."""
    seat = SimpleNamespace(agent_id="a1", name="alice", winner=False, total="")
    match = SimpleNamespace(match_id="m-1", ladder="class", state="running", finished="", created="2026-12-06 00:16:30",
                            seats=[seat], place=None, faults=0)  # fmt: skip
    context = dict(ladder="class", agent_id="", agent_name="", matches=[match], next_page="", ladders=["class"])
    context |= dict(total=1, total_text="1", shown=1, choose=False)
    running = render("matches.html", running=True, **context)
    finished = render("matches.html", running=False, **context)
    assert "<th>started</th>" in running and "<th>finished</th>" not in running
    assert "<th>finished</th>" in finished


def test_the_next_page_of_running_matches_keeps_listing_running_ones() -> None:
    """The running list's "Older matches" link left out state=running: its next page listed finished ones."""
    context = dict(ladder="class", agent_id="a1", agent_name="", matches=[], ladders=["class"], choose=False)
    context |= dict(total=60, total_text="60", shown=50, next_page="running-after:class-7")
    running = render("matches.html", running=True, **context)
    finished = render("matches.html", running=False, **context)
    link = 'href="/matches?ladder=class&agent=a1&state=running&page=running-after%3Aclass-7"'
    assert link in running
    assert 'href="/matches?ladder=class&agent=a1&page=running-after%3Aclass-7"' in finished


def test_controls_have_names_in_words() -> None:
    """A screen reader named the replay's first and last buttons by their glyphs ("«", "»": the title
    is not read when there is text), and the tournament's progress bar had no name at all, nor the
    header of its standings' column of interval bars."""
    match = SimpleNamespace(match_id="m-1", ladder="class")
    replay = render(
        "replay.html", match=match, record={"hands": []}, rules="classic", seats=[], replay_json="{}", steps=1
    )
    for attributes, text in re.findall(r"<button([^>]*)>([^<]*)</button>", replay):
        label = re.search(r'aria-label="([^"]*)"', attributes)
        assert re.search(r"[a-z]", label.group(1) if label else text), (attributes, text)
    t = SimpleNamespace(id="cup", state="running", round=1, rounds=1, tables_done=0, tables=1, games_done=0,
                        games_total=6, finished="", percent=0)  # fmt: skip
    live = render("_tournament_live.html", t=t, standings=[], tables=[], tables_page="", tables_next="")
    assert re.search(r'role="progressbar" aria-label="[a-z ]+"', live)
    assert "<th></th>" not in re.sub(r"<th[^>]*>", "<th>", live)  # the interval bars' column had an empty header


def test_a_paused_ladder_says_so_to_visitors() -> None:
    """Only the host page said a ladder was paused: its visitors saw a leaderboard that stopped
    changing, and nothing saying why."""
    paused = views.ladder_row(
        pb.Ladder(name="class", rules=rules_pb2.Rules(preset="classic"), seats=4, paused=True), []
    )
    running = views.ladder_row(pb.Ladder(name="open", rules=rules_pb2.Rules(preset="classic"), seats=4), [])
    board = render("leaderboard.html", ladder=paused, rows=[], waiting=0, running=[])
    assert "no new match starts until it is resumed" in board
    assert 'id="paused"' not in render("leaderboard.html", ladder=running, rows=[], waiting=0, running=[])
    listed = render("ladders.html", ladders=[paused, running])
    assert re.findall(r'<a href="/ladders/(\w+)">\w+</a> <span class="tag">paused</span>', listed) == ["class"]


def test_an_open_ladder_says_so_to_visitors() -> None:
    """A bot author could not tell from the web app which ladder takes self-registered agents."""
    rules = rules_pb2.Rules(preset="classic")
    opened = views.ladder_row(pb.Ladder(name="free", rules=rules, seats=4, entry=pb.LADDER_ENTRY_OPEN), [])
    closed = views.ladder_row(pb.Ladder(name="class", rules=rules, seats=4), [])
    assert "an agent may register itself" in render("leaderboard.html", ladder=opened, rows=[], waiting=0, running=[])
    assert 'id="open-entry"' not in render("leaderboard.html", ladder=closed, rows=[], waiting=0, running=[])
    listed = render("ladders.html", ladders=[opened, closed])
    assert re.findall(r'<a href="/ladders/(\w+)">\w+</a> <span class="tag"[^>]*>open entry</span>', listed) == ["free"]


def test_the_tournament_page_says_what_a_forfeit_counts_as() -> None:
    """An entrant never online forfeited all its games and still ranked above built-in bots, its
    scores being the stand-in random bot's: the page did not say who played its seats."""
    t = SimpleNamespace(id="cup", state="finished", round=1, rounds=1, tables_done=1, tables=1, games_done=6,
                        games_total=6, finished="", percent=100, format="round robin", entrants=3, seats=3, deals=1,
                        preset="classic", created="")  # fmt: skip
    context = dict(t=t, grace="30", entrants=[], standings=[], tables=[], tables_page="", tables_next="")
    page = render("tournament.html", **context)
    assert "random bot played its seat" in re.sub(r"\s+", " ", page)


def test_standings_with_no_complete_deal_say_why_not_that_no_game_finished() -> None:
    """The standings count a deal once it has been played in every rotation: a tournament cancelled
    after its first game (1/120 games beside them) said "No game has finished yet"."""
    from arena.proto.ohell.v1 import tournament_pb2 as tpb
    from services.web import tournament_views as tv

    def said(games_done: int) -> str:
        progress = tpb.TournamentProgress(state=tpb.TOURNAMENT_STATE_CANCELLED, games_done=games_done, games_total=120)
        html = render("_tournament_live.html", **tv.detail(tpb.GetTournamentResponse(progress=progress)))
        return re.sub(r"\s+", " ", html.split('<table id="standings">')[1].split("</table>")[0])

    assert "No game has finished yet." not in said(1) and "No deal is complete in the 1 game played" in said(1)
    assert "once it has been played in every rotation" in said(2) and "the 2 games played" in said(2)
    assert "No game has finished yet." in said(0)


def test_a_ladder_without_a_leader_says_why_the_cell_is_empty() -> None:
    """Its 'leader' cell was blank, as if a name were missing."""
    ladder = {
        "name": "fresh",
        "preset": "classic",
        "seats": 4,
        "agents": 2,
        "matches": 0,
        "leader": "",
        "paused": False,
    }
    shown = render("ladders.html", ladders=[ladder])
    assert "<td>none yet (no rated match)</td>" in shown
