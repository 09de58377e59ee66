"""A whole classic (000) game with seats of every kind; the match host runs in this process, the
gateway holding the connected agent's stream in another (the engine service), relayed by Redis."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from svc_helpers import ScriptedAgent

from arena.play.host import host_match
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import spectate_pb2, spectate_pb2_grpc
from arena.sdk import connect_async, serve_async
from ohell.bots import make_bot
from ohell.presets import preset
from ohell.referee import referee


@pytest.mark.slow
def test_classic_game_mixed_seats_across_processes(engine_process, make_agent, shared_redis_server) -> None:
    sdk_id, sdk_token = make_agent("sdk")
    raw_id, raw_token = make_agent("raw")

    async def run() -> tuple[dict, ScriptedAgent, list[spectate_pb2.MatchEvent]]:
        ready = asyncio.Event()
        sdk_agent = asyncio.create_task(
            connect_async(make_bot("heuristic", 3), engine_process.address, sdk_token, matches=1, ready=ready)
        )
        await asyncio.wait_for(ready.wait(), 10)
        raw = await ScriptedAgent(engine_process.address, raw_token).start()
        endpoint = await serve_async(make_bot("random", 4))
        seats = [
            SeatSpec.connected(sdk_id, "sdk-heuristic"),
            SeatSpec.endpoint(f"127.0.0.1:{endpoint.port}"),
            SeatSpec.builtin("heuristic"),
            SeatSpec.connected(raw_id),
        ]
        spectated: list[spectate_pb2.MatchEvent] = []

        async def spectate() -> None:
            async with grpc.aio.insecure_channel(engine_process.address) as channel:
                stub = spectate_pb2_grpc.SpectateServiceStub(channel)
                async for response in stub.Spectate(spectate_pb2.SpectateRequest(match_id="full-1", wait_ms=5000)):
                    spectated.append(response.event)

        watcher = asyncio.create_task(spectate())
        record = await host_match(
            "full-1",
            preset("classic"),
            seats,
            seed=11,
            time_control=TimeControl(decision_ms=2000),
            redis_url=shared_redis_server.url,
        )
        session = await asyncio.wait_for(sdk_agent, 10)
        assert session.matches_ended == 1
        await asyncio.wait_for(watcher, 10)
        await raw.stop()
        await endpoint.server.stop(0)
        return record, raw, spectated

    record, raw, spectated = asyncio.run(run())
    assert record["complete"] and record["faults"] == [] and record["forfeited"] == []  # no TIMEOUT: no deadline missed
    assert len(record["hands"]) == 19  # 10 down to 1 and back up to 10
    assert [s["kind"] for s in record["seats"]] == ["connected", "endpoint", "builtin", "connected"]
    assert record["seats"][0] == {"name": "sdk-heuristic", "kind": "connected", "agent_id": sdk_id}
    assert referee(record).valid, referee(record).summary()
    cards_per_seat = sum(h["size"] for h in record["hands"])  # 10..1..10: 109
    assert cards_per_seat == 109
    assert len(raw.decisions) == 19 + cards_per_seat  # the raw agent was asked every bid and play
    kinds = [event.WhichOneof("event") for event in spectated]
    assert kinds[0] == "match_started" and kinds[-1] == "match_ended"
    assert kinds.count("hand_ended") == 19 and kinds.count("card_played") == 4 * cards_per_seat
    assert [e.sequence for e in spectated] == list(range(len(spectated)))
    assert list(spectated[-1].match_ended.totals) == record["totals"]
    hand_results = [e.hand_ended for e in spectated if e.WhichOneof("event") == "hand_ended"]
    assert [list(h.totals) for h in hand_results] == [hand["totals"] for hand in record["hands"]]
    told = [e.hand_ended for e in raw.events if e.WhichOneof("event") == "hand_ended"]
    assert [list(h.points) for h in told] == [hand["points"] for hand in record["hands"]]
