"""The match list's agent filter takes an agent's id: a name typed there ('heur-1') listed '0
finished matches' as if the agent had played none. The matchmaker looks agents up by id only
(GetAgent), so the page says next to the field what it takes, and for an id no agent has, that
there is no such agent and what to give instead."""

from __future__ import annotations

import re
import warnings
from typing import Any

from starlette.exceptions import StarletteDeprecationWarning

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from services.web.api import Api, ApiError
from services.web.app import create_app

with warnings.catch_warnings():  # as tests/web/test_host_cookies.py: httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient


class OneAgent(Api):
    """A matchmaker with one ladder ("class") and one agent ("a3", named "heur-1") that has played no match."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1:1")

    async def ladders(self) -> list[pb.Ladder]:
        return [pb.Ladder(name="class", rules=rules_pb2.Rules(preset="classic"), seats=4)]

    async def matches(
        self, ladder: str = "", agent_id: str = "", page_size: int = 50, page_token: str = "", running: bool = False
    ) -> pb.ListMatchesResponse:
        return pb.ListMatchesResponse()  # as the matchmaker answers for an id no agent has, too

    async def _call(self, method: str, request: Any, token: str = "") -> Any:
        """GetAgent as the matchmaker answers it (Api.agent and Api.names are the real ones)."""
        assert method == "GetAgent", method
        if request.agent_id != "a3":
            raise ApiError("NOT_FOUND", f"no agent {request.agent_id!r}")
        return pb.GetAgentResponse(agent=pb.Agent(agent_id="a3", name="heur-1"))


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_a_name_given_for_an_agent_id_is_said_to_be_no_agents_id() -> None:
    with TestClient(create_app(OneAgent())) as client:
        by_name = client.get("/matches", params={"agent": "heur-1"})
        assert by_name.status_code == 200
        said = text(by_name.text)
        assert "finished matches" not in said and "0 finished" not in said
        assert "No agent has the id 'heur-1': the agent filter takes an agent's id, e.g. a12" in said.replace(
            "&#39;", "'"
        )
        assert re.search(r'<input name="agent" value="heur-1"[^>]*aria-describedby="agent-hint"', by_name.text)
        assert "an agent's id (e.g. a12, on its page), not its name" in text(by_name.text).replace("&#39;", "'")

        by_id = text(client.get("/matches", params={"agent": "a3"}).text)  # an agent with no match: none listed
        assert "0 finished matches" in by_id and "No agent has the id" not in by_id


class GoneAgent(OneAgent):
    """Besides "a3": one finished match of "a9", an agent the matchmaker no longer knows, with "a3"."""

    async def matches(
        self, ladder: str = "", agent_id: str = "", page_size: int = 50, page_token: str = "", running: bool = False
    ) -> pb.ListMatchesResponse:
        if agent_id != "a9" or running:
            return pb.ListMatchesResponse()
        match = pb.MatchSummary(match_id="class-1", ladder="class", state="finished", agent_ids=["a9", "a3"])
        return pb.ListMatchesResponse(matches=[match], total_size=1)


def heading(html: str) -> str:
    (found,) = re.findall(r"<h1>(.*?)</h1>", html, re.S)
    return text(found).strip()


def test_the_heading_names_the_filters_agent_or_gives_its_id_when_it_is_gone() -> None:
    """The heading said 'Matches with a3' (the id) when no match of the agent was listed: its name
    came only from the matches shown."""
    with TestClient(create_app(GoneAgent())) as client:
        assert heading(client.get("/matches", params={"agent": "a3"}).text) == "Matches with heur-1"
        running = client.get("/matches", params={"agent": "a3", "ladder": "class", "state": "running"})
        assert heading(running.text) == "Matches of class with heur-1"
        gone = client.get("/matches", params={"agent": "a9"})  # its match listed, its name unknown: its id
        assert heading(gone.text) == "Matches with a9" and "class-1" in gone.text
        assert "No agent has the id" not in text(gone.text)
