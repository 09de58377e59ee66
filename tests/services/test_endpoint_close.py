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


def test_a_close_cancelled_while_it_waits_for_the_endpoint_still_hangs_up() -> None:
    """``close`` waits up to 5 s for an endpoint to end its call; cancelled meanwhile (the match's own
    cancellation) it skipped the hang-up: the call, its reader and the channel were left running."""
    import grpc

    from arena.play.players import PLAY_METHOD

    async def run() -> EndpointPlayer:
        async def never_ends(requests: object, context: grpc.aio.ServicerContext) -> None:
            await asyncio.Event().wait()  # reads nothing, answers nothing, never ends the call

        service, method = PLAY_METHOD.strip("/").split("/")
        server = grpc.aio.server()
        handler = grpc.stream_stream_rpc_method_handler(never_ends)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {method: handler}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            player = EndpointPlayer(f"127.0.0.1:{port}")
            await player.open(match_pb2.MatchStarted(match_id="m", seat=0, rules=rules_to_proto(Rules())))
            closing = asyncio.create_task(player.close())
            await asyncio.sleep(0.05)  # under way: half-closed, waiting for an end that never comes (or about to)
            assert not closing.done()
            closing.cancel()
            cancelled = False
            try:
                await closing
            except asyncio.CancelledError:
                cancelled = True
            assert cancelled  # the cancellation goes on to whoever cancelled the match
            return player
        finally:
            await server.stop(0)

    player = asyncio.run(run())
    assert player.call is None and player.reader is None and player.channel is None
