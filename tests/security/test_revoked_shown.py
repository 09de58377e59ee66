"""The host sees which agents are revoked, and since when (``Agent.revoked``, ``revoked_ms``:
revision 11): ``ListAgents`` and the host's ``GetAgent``, ``ohell agent list``, the host page. No
one else is told. A rotation gives the agent a token again and clears the mark. Before revision 11
nothing said it: the host had to try a token to learn that it was dead."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from arena.cli import main
from arena.clock import now_ms
from arena.local.admin_show import when
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata
from services.web.api import Api
from services.web.app import create_app

from .conftest import HOST_TOKEN, Service

with warnings.catch_warnings():  # as tests/web/test_host_cookies.py: httpx is what tests install
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

HOST = auth_metadata(HOST_TOKEN)
Stub = matchmaker_pb2_grpc.MatchmakerServiceStub


def listed(stub: Stub) -> dict[str, pb.Agent]:
    return {a.name: a for a in stub.ListAgents(pb.ListAgentsRequest(), metadata=HOST).agents}


def agent_rows(address: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """``ohell agent list``'s rows by agent name."""
    assert main(["agent", "list", "--matchmaker", address]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if " a" in line]
    return {name: row for row in rows for name in ("gone", "kept") if f" {name} " in row}


def host_page(address: str) -> str:
    with TestClient(create_app(Api(address), host_token=HOST_TOKEN)) as client:
        assert client.post("/host/login", data={"token": HOST_TOKEN}, follow_redirects=False).status_code == 303
        return client.get("/host").text


def revoked_card(page: str) -> str:
    return page.split('id="revoked-agents"', 1)[1].split("</section>", 1)[0]


@pytest.mark.slow  # a matchmaker process
def test_the_host_sees_a_revoked_agent_until_it_is_rotated(
    start_service: Callable[..., Service], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OHELL_HOST_TOKEN", HOST_TOKEN)
    monkeypatch.setenv("COLUMNS", "200")  # the table's columns whole
    service = start_service("services.matchmaker")
    address = service.address
    with service.channel() as channel:
        stub = Stub(channel)
        ids = {}
        for name in ("gone", "kept"):
            request = pb.RegisterAgentRequest(name=name, kind=pb.AGENT_KIND_CONNECTED)
            ids[name] = stub.RegisterAgent(request, metadata=HOST).agent.agent_id
        before = now_ms()
        assert stub.RevokeAgentToken(pb.RevokeAgentTokenRequest(agent_id=ids["gone"]), metadata=HOST).revoked
        agents = listed(stub)
        assert agents["gone"].revoked and before <= agents["gone"].revoked_ms <= now_ms()
        assert not agents["kept"].revoked and agents["kept"].revoked_ms == 0
        since = agents["gone"].revoked_ms
        assert stub.GetAgent(pb.GetAgentRequest(agent_id=ids["gone"]), metadata=HOST).agent.revoked_ms == since
        # anyone else reads it as any agent: not told, whoever asks
        kept_token = stub.RotateAgentToken(pb.RotateAgentTokenRequest(agent_id=ids["kept"]), metadata=HOST).token
        for metadata in (None, auth_metadata(kept_token)):
            seen = stub.GetAgent(pb.GetAgentRequest(agent_id=ids["gone"]), metadata=metadata).agent
            assert seen.name == "gone" and not seen.revoked and seen.revoked_ms == 0
        # revoking again (it had no token left: revoked false) keeps the first time
        assert not stub.RevokeAgentToken(pb.RevokeAgentTokenRequest(agent_id=ids["gone"]), metadata=HOST).revoked
        assert listed(stub)["gone"].revoked_ms == since

        rows = agent_rows(address, capsys)
        assert f"revoked {when(since)} UTC" in rows["gone"] and "revoked" not in rows["kept"], rows
        card = revoked_card(host_page(address))
        assert f'data-agent="{ids["gone"]}"' in card and f'data-agent="{ids["kept"]}"' not in card, card
        assert f"{when(since)} UTC" in card, card

        rotated = stub.RotateAgentToken(pb.RotateAgentTokenRequest(agent_id=ids["gone"]), metadata=HOST)
        assert not rotated.agent.revoked and rotated.agent.revoked_ms == 0
        assert not listed(stub)["gone"].revoked and listed(stub)["gone"].revoked_ms == 0
        assert "revoked" not in agent_rows(address, capsys)["gone"]
        assert "data-agent=" not in revoked_card(host_page(address))
        # and its new token works again
        version = pb.SetAgentVersionRequest(agent_id=ids["gone"], version="2")
        assert stub.SetAgentVersion(version, metadata=auth_metadata(rotated.token)).agent.version == "2"
