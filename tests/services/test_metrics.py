"""Prometheus metrics of the match host, served over HTTP by the common helper."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import pytest
from prometheus_client import REGISTRY
from svc_helpers import ScriptedAgent, card, first_legal

from arena.play.host import host_match
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import match_pb2
from arena.rpc.metrics_http import start_metrics_server
from ohell.rules import Rules


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_decisions_timeouts_and_illegal_actions_are_counted(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("metered")

    async def policy(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        if len(agent.decisions) == 1:
            return None  # never answers: TIMEOUT
        if len(agent.decisions) == 2:
            held = {(c.suit, c.rank) for c in request.observation.hand}
            wrong = next(i for i in range(52) if (card(i).suit, card(i).rank) not in held)
            action = first_legal(request)
            action.card.CopyFrom(card(wrong))
            return action  # ILLEGAL
        return first_legal(request)

    before = {
        "decisions": value("ohell_agent_decisions_total", agent_kind="connected"),
        "builtin": value("ohell_agent_decisions_total", agent_kind="builtin"),
        "timeouts": value("ohell_agent_timeouts_total", agent_kind="connected"),
        "illegal": value("ohell_agent_illegal_actions_total", agent_kind="connected"),
        "observed": value("ohell_agent_decision_seconds_count", agent_kind="connected"),
    }

    async def run() -> dict:
        agent = await ScriptedAgent(engine_process.address, token, policy).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        record = await host_match(
            "metered-1",
            Rules(hand_sizes=(3,)),
            seats,
            2,
            time_control=TimeControl(decision_ms=1000, time_bank_ms=0),
            redis_url=shared_redis_server.url,
        )
        await agent.stop()
        return record

    record = asyncio.run(run())
    assert [f["kind"] for f in record["faults"]] == ["TIMEOUT", "ILLEGAL"]
    assert value("ohell_agent_decisions_total", agent_kind="connected") - before["decisions"] == 4  # 1 bid, 3 cards
    assert value("ohell_agent_decision_seconds_count", agent_kind="connected") - before["observed"] == 4
    assert value("ohell_agent_decisions_total", agent_kind="builtin") - before["builtin"] == 8
    assert value("ohell_agent_timeouts_total", agent_kind="connected") - before["timeouts"] == 1
    assert value("ohell_agent_illegal_actions_total", agent_kind="connected") - before["illegal"] == 1
    assert value("ohell_agent_faults_total", agent_kind="connected", fault="TIMEOUT") >= 1

    server, thread, port = start_metrics_server(0)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    finally:
        server.shutdown()
    assert 'ohell_agent_decision_seconds_bucket{agent_kind="connected",le="0.001"}' in text
    assert "ohell_agent_timeouts_total" in text
