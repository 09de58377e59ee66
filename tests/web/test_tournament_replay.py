"""A tournament game's replay page on real processes (redis-server, the matchmaker, its Celery
workers, the web app): linked from an ended tournament's page and drawn from GetTournamentGame; while
the tournament runs neither the link nor the page is there (other tables may still play the same
deals), and a bad or unknown id says which. A table with many games lists them on its own page."""

from __future__ import annotations

import json
import re
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata

from ..ladder.helpers import wait_until
from .conftest import HOST_TOKEN, TourneySite, tournament_site

pytestmark = pytest.mark.slow  # a stack and the web app as processes

SHORT = rules_pb2.Rules(preset="classic", hand_sizes=[3, 2, 1])
CARD = re.compile(r"\b(?:[2-9TJQKA]|10)[CDHS♣♦♥♠]")  # a card as records ("TH") or pages ("10♥") write it
REPLAY_DATA = re.compile(r'<script id="replay" type="application/json">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def site(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TourneySite]:
    logs = tmp_path_factory.mktemp("web-tournament-replay")
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=f"wr{secrets.token_hex(4)}:",
        log_dir=str(logs),
        host_token=HOST_TOKEN,
        engine=False,
        remote_worker=False,  # a connected entrant's tables stay queued: a tournament that keeps running
    )
    with tournament_site(config) as tsite:
        yield tsite


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def create(site: TourneySite, tourney_id: str, entrants: list[tpb.TournamentEntrant], deals: int = 1) -> None:
    tourney = tpb.Tournament(tournament_id=tourney_id, entrants=entrants, rules=SHORT, deals=deals, grace_seconds=0)
    site.stub.CreateTournament(tpb.CreateTournamentRequest(tournament=tourney), metadata=auth_metadata(HOST_TOKEN))


def refused(site: TourneySite, *cases: tuple[str, int, str]) -> None:
    """Each (address, status, words): the page at the address has that status and says the words."""
    for address, code, words in cases:
        status, html = fetch(site.url + address)
        assert status == code and words in html, (address, status)


def finished(site: TourneySite, tourney_id: str) -> None:
    get = tpb.GetTournamentRequest(tournament_id=tourney_id)
    wait_until(lambda: site.stub.GetTournament(get).progress.state == tpb.TOURNAMENT_STATE_FINISHED, 60, tourney_id)


def bots(*names: str) -> list[tpb.TournamentEntrant]:
    return [tpb.TournamentEntrant(bot=name) for name in names]


def test_a_finished_tournaments_games_link_their_replays(site: TourneySite) -> None:
    create(site, "done", bots("strong", "heuristic", "random"))
    finished(site, "done")
    status, html = fetch(f"{site.url}/tournaments/done")
    assert status == 200
    links = re.findall(r'<a href="(/tournaments/done/games/[^"]+)">([^<]+)</a>', html)
    assert links == [(f"/tournaments/done/games/r1t0/d0/r{turn}", f"d0/r{turn}") for turn in range(3)]
    _, exported = fetch(f"{site.url}/tournaments/done/export.json")
    records = json.loads(exported)["records"]
    for address, label in links:
        status, html = fetch(site.url + address)
        assert status == 200 and f"Replay: done r1t0/{label}" in html
        found = REPLAY_DATA.search(html)
        assert found, html
        viewer = json.loads(found.group(1))
        record = records[f"r1t0/{label}"]
        assert [hand["deal"] for hand in viewer["hands"]] == [hand["deal"] for hand in record["hands"]]
        assert 'href="/tournaments/done">tournament done</a>' in html
        for seat in record["seats"]:
            assert f'<span class="name">{seat["name"]}</span>' in html

    refused(
        site,
        ("/tournaments/done/games/r1t0/d0/x", 400, "game_id"),
        ("/tournaments/done/games/R1T0/d0/r0", 400, "game_id"),
        ("/tournaments/done/games/r1t0/d1/r0", 404, "game_id"),
        ("/tournaments/done/games/r1t9/d0/r0", 404, "game_id"),
        ("/tournaments/no-such/games/r1t0/d0/r0", 404, "tournament_id"),
        ("/tournaments/Bad!/games/r1t0/d0/r0", 400, "tournament_id"),
        ("/tournaments/done/games/r1t0/d0", 404, ""),
    )


def test_a_table_with_many_games_lists_them_on_its_own_page(site: TourneySite) -> None:
    """15 games (5 deal sets x 3 rotations), over the 12 a table's row lists: the tournament page
    links the table's page instead, which lists them all by deal set and rotation."""
    create(site, "many", bots("strong", "heuristic", "random"), deals=5)
    finished(site, "many")
    status, html = fetch(f"{site.url}/tournaments/many")
    assert status == 200 and "/games/" not in html
    assert '<a class="table-games" href="/tournaments/many/tables/r1t0">15 games</a>' in html

    status, html = fetch(f"{site.url}/tournaments/many/tables/r1t0")
    assert status == 200
    assert html.count("<h1") == 1 and "<title>r1t0 · tournament many · ohell arena</title>" in html
    assert '<a id="back" href="/tournaments/many">tournament many</a>' in html
    links = re.findall(r'<a href="(/tournaments/many/games/[^"]+)">([^<]+)</a>', html)
    games = [f"d{deal}/r{turn}" for deal in range(5) for turn in range(3)]
    assert links == [(f"/tournaments/many/games/r1t0/{game}", game) for game in games]
    assert re.findall(r'<th title="rotation \d">(r\d)</th>', html) == ["r0", "r1", "r2"]
    status, html = fetch(site.url + links[-1][0])
    assert status == 200 and "Replay: many r1t0/d4/r2" in html

    refused(
        site,
        ("/tournaments/many/tables/R1T0", 400, "table_id"),
        ("/tournaments/many/tables/r1t0x", 400, "table_id"),
        ("/tournaments/many/tables/r1t9", 404, "table_id"),
        ("/tournaments/no-such/tables/r1t0", 404, "tournament_id"),
        ("/tournaments/Bad!/tables/r1t0", 400, "tournament_id"),
    )


def test_a_running_tournaments_games_have_no_replay(site: TourneySite) -> None:
    """The bots' table has played its games while the connected entrant's tables wait: the page
    links none of them, and the address of one shows no card."""
    agent = site.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="late", kind=pb.AGENT_KIND_CONNECTED), metadata=auth_metadata(HOST_TOKEN)
    )
    create(
        site, "going", [*bots("strong", "heuristic", "random"), tpb.TournamentEntrant(agent_id=agent.agent.agent_id)]
    )
    get = tpb.GetTournamentRequest(tournament_id="going")
    wait_until(lambda: [t for t in site.stub.GetTournament(get).tables if t.games_done == 3], 60, "the bots' table")
    [played] = [t.table_id for t in site.stub.GetTournament(get).tables if t.games_done == 3]
    status, html = fetch(f"{site.url}/tournaments/going")
    assert status == 200 and 'data-state="running"' in html
    assert "/games/" not in html and "replays" not in html
    for turn in range(3):
        status, html = fetch(f"{site.url}/tournaments/going/games/{played}/d0/r{turn}")
        assert status == 400 and "still running" in html
        assert 'id="replay"' not in html and not CARD.search(html), html
    status, html = fetch(f"{site.url}/tournaments/going/tables/{played}")
    assert status == 400 and "still running" in html and "/games/" not in html
