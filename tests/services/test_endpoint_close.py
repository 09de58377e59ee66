"""The host's last words to an endpoint agent reach it: ``EndpointPlayer.close`` ended the Play call
(closing its channel, which cancels it) right after writing the MatchEnded and half-closing, and the
endpoint's server dropped what it had not yet read. The endpoint then never logged the match's end
("match ep-1 ended"), though the host had recorded it finished: seen in
tests/security/test_endpoint_on_ladder.py, about one run in three on a busy machine."""

from __future__ import annotations

import asyncio

from arena.play.players import EndpointPlayer
from arena.proto.ohell.v1 import match_pb2
from arena.sdk import serve_async
from arena.wire import rules_to_proto
from ohell.bots import make_bot
from ohell.rules import Rules

MATCHES = 30


def test_every_match_ended_written_before_close_reaches_the_endpoint() -> None:
    async def run() -> list[str]:
        ended: list[str] = []

        def on_event(event: match_pb2.AgentEvent) -> None:
            if event.HasField("match_ended"):
                ended.append(event.match_ended.match_id)

        bot = make_bot("random", 1)
        bot.on_event = on_event  # type: ignore[attr-defined]
        served = await serve_async(bot)
        try:
            for number in range(MATCHES):
                match_id = f"m-{number}"
                player = EndpointPlayer(f"127.0.0.1:{served.port}")
                await player.open(match_pb2.MatchStarted(match_id=match_id, seat=0, rules=rules_to_proto(Rules())))
                await player.notify(match_pb2.AgentEvent(match_ended=match_pb2.MatchEnded(match_id=match_id)))
                assert not player.broken, player.broken  # written: in the endpoint's hands
                await player.close()
        finally:
            await served.server.stop(0)
        return ended

    ended = asyncio.run(run())
    assert ended == [f"m-{number}" for number in range(MATCHES)]
