"""The SDK pointed at a hostile or broken server: what it cannot read is one log line and left
unanswered; it neither crashes with a traceback nor stops counting its matches."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from arena.proto.ohell.v1 import gateway_pb2, match_pb2, matchmaker_pb2
from arena.rpc.auth import AGENT_ID_HEADER, QUEUED_HEADER
from arena.rpc.server import Served, Service, create_server, stop_server
from arena.sdk import AgentError, connect_async, serve_async
from arena.sdk.connection import handled
from arena.sdk.ladder import hold_ticket
from arena.sdk.session import MAX_OPEN_MATCHES, Session
from arena.wire import observation_to_proto, rules_to_proto
from ohell.bots import make_bot
from ohell.observation import observe
from ohell.presets import preset
from ohell.state import BID_BASE, Game, Phase

SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["AgentGatewayService"].full_name


def _bidding_state() -> Any:
    state = Game(preset("classic"), 3).new_state()
    while state.phase <= Phase.DEAL:
        state.chance_random(random.Random(1))
    return state


def started(match_id: str = "m") -> match_pb2.AgentEvent:
    event = match_pb2.AgentEvent()
    event.match_started.match_id, event.match_started.seat = match_id, _bidding_state().current
    event.match_started.rules.CopyFrom(rules_to_proto(preset("classic")))
    return event


def decision(match_id: str = "m") -> match_pb2.AgentEvent:
    state = _bidding_state()
    event = match_pb2.AgentEvent()
    request = event.decision
    request.match_id, request.seat, request.decision_id = match_id, state.current, 1
    request.kind, request.deadline_ms = match_pb2.DECISION_KIND_BID, 1000
    request.legal_bids.extend(action - BID_BASE for action in state.legal_actions())
    request.observation.CopyFrom(observation_to_proto(observe(state, state.current)))
    return event


def _as_play(event: match_pb2.AgentEvent, suit: int, rank: int) -> None:
    event.decision.kind = match_pb2.DECISION_KIND_PLAY
    event.decision.legal_cards.add(suit=suit, rank=rank)  # type: ignore[arg-type]


def _as_change_without_bids(event: match_pb2.AgentEvent) -> None:
    event.decision.kind = match_pb2.DECISION_KIND_CHANGE_BID
    event.decision.observation.ClearField("bids")


def _as_change_of_no_bid(event: match_pb2.AgentEvent) -> None:
    event.decision.kind = match_pb2.DECISION_KIND_CHANGE_BID  # its own bid is still -1 (none yet)


def _as_play_of_18(event: match_pb2.AgentEvent) -> None:
    event.decision.kind = match_pb2.DECISION_KIND_PLAY
    for card in range(18):
        event.decision.legal_cards.add(suit=1 + card // 13, rank=2 + card % 13)  # type: ignore[arg-type]


def _with_trick(trick: Any, cards: int) -> None:
    for card in range(cards):
        trick.cards.add(suit=1 + card // 13, rank=2 + card % 13)


def _with_tricks_past_the_hand(event: match_pb2.AgentEvent) -> None:
    for _ in range(event.decision.observation.hand_size + 1):
        _with_trick(event.decision.observation.tricks.add(), 3)


def _hostile_decisions() -> dict[str, match_pb2.AgentEvent]:
    cases: dict[str, Callable[[match_pb2.AgentEvent], None]] = {
        "no legal bids": lambda e: e.decision.ClearField("legal_bids"),
        "a play with no legal cards": lambda e: setattr(e.decision, "kind", match_pb2.DECISION_KIND_PLAY),
        "a legal card of suit 9 rank 99": lambda e: _as_play(e, 9, 99),
        "a legal card of suit 0 rank 0": lambda e: _as_play(e, 0, 0),
        "a legal card of suit 4 rank 15": lambda e: _as_play(e, 4, 15),
        "a hand card of suit 0": lambda e: e.decision.observation.hand.add(suit=0, rank=2),  # type: ignore[arg-type]
        "a bid change without bids": _as_change_without_bids,
        "a bid change of a seat that has not bid": _as_change_of_no_bid,
        # bounds of a decision: the strong bot took 7 s over 900,000 legal bids and 17 s over 20,000 tricks
        "900,000 legal bids": lambda e: e.decision.legal_bids.extend(list(range(18)) * 50_000),
        "a legal bid of 18 tricks": lambda e: e.decision.legal_bids.append(18),
        "18 legal cards": _as_play_of_18,
        "more finished tricks than cards dealt": _with_tricks_past_the_hand,
        "a trick of more cards than seats": lambda e: _with_trick(e.decision.observation.tricks.add(), 4),
        "a current trick of more cards than seats": lambda e: _with_trick(e.decision.observation.current_trick, 4),
    }
    events = {}
    for name, spoil in cases.items():
        event = decision()
        spoil(event)
        events[name] = event
    return events


@pytest.mark.parametrize("case", list(_hostile_decisions()))
def test_a_decision_the_sdk_cannot_read_is_one_line_and_never_reaches_the_bot(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, no legal action, a card index past 51 or a bid change without bids ended the agent (all
    its matches) with a traceback; a card that is no card reached the bot as a negative number, and
    the bot's resulting exception was logged as the author's bug."""
    session = Session(make_bot("heuristic", 1))
    session.handle(started())
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, _hostile_decisions()[case]) is None
    lines = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(lines) == 1 and "cannot read a decision event" in lines[0].getMessage(), lines
    assert lines[0].exc_info is None and "\n" not in lines[0].getMessage()
    assert session.errors == 0  # the bot was not blamed


@pytest.mark.parametrize("bids", [[], [0, 0], [0, 0, 0, 0]])
def test_a_bid_change_with_bids_not_one_a_seat_on_a_later_decision_is_one_line(
    bids: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    """The session checked ``len(observation.bids)`` itself before reading this seat's bid; the reader
    refuses bids not one value a seat on every decision (the hand's table read already too), so
    that check went: the decision is still one line, never an IndexError."""
    session = Session(make_bot("heuristic", 1))
    session.handle(started())
    assert handled(session, decision()) is not None  # the hand's table is read
    event = decision()
    event.decision.decision_id, event.decision.kind = 2, match_pb2.DECISION_KIND_CHANGE_BID
    event.decision.observation.bids[:] = bids
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, event) is None
    lines = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(lines) == 1 and "cannot read a decision event" in lines[0] and "observation.bids" in lines[0], lines


def test_a_match_end_with_an_unknown_fault_kind_is_logged_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    """Before, FaultKind 99 (a newer or a hostile platform) raised ValueError out of the log line:
    the agent ended with a traceback, and ``connect(matches=1)`` never counted the match."""
    session = Session(make_bot("heuristic", 1))
    session.handle(started())
    ended = match_pb2.AgentEvent()
    ended.match_ended.match_id = "m"
    ended.match_ended.totals.extend([1, 2])  # fewer totals than seats, too
    ended.match_ended.faults.add(seat=session.seats["m"], kind=99, detail="odd")  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, ended) is None
    assert session.matches_ended == 1
    assert any("fault in hand" in r.getMessage() and "99" in r.getMessage() for r in caplog.records)


def test_a_fault_is_logged_by_the_name_match_records_give_it(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK logged "FAULT_KIND_BOT_ERROR" for the fault ``ohell match show`` lists as "BOT_ERROR"."""
    session = Session(make_bot("heuristic", 1))
    session.handle(started())
    ended = match_pb2.AgentEvent()
    ended.match_ended.match_id = "m"
    ended.match_ended.totals.extend([1, 2, 3])
    ended.match_ended.faults.add(seat=session.seats["m"], hand=2, kind=match_pb2.FAULT_KIND_BOT_ERROR, detail="oops")
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, ended) is None
    assert "  fault in hand 2: BOT_ERROR oops" in [r.getMessage() for r in caplog.records]


def ended_with_forfeit(match_id: str, seat: int) -> match_pb2.AgentEvent:
    ended = match_pb2.AgentEvent()
    ended.match_ended.match_id = match_id
    ended.match_ended.totals.extend([30, 0, 12])
    ended.match_ended.forfeited.append(seat)
    for _ in range(10):
        ended.match_ended.faults.add(seat=seat, kind=match_pb2.FAULT_KIND_DISCONNECTED, detail="not connected")
    return ended


def test_the_end_of_a_match_begun_before_the_process_is_no_result_of_seat_minus_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bot stopped mid-match and started again hears that match end (the gateway sends its end,
    not its start, to the new stream): it logged 'you (seat -1) placed 0 of 3, 0 fault(s) of yours'
    of a match it had forfeited with 10 faults, and counted it, so ``--matches 1`` stopped there."""
    session = Session(make_bot("heuristic", 1))
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, ended_with_forfeit("before", 1)) is None
    line = caplog.records[-1].getMessage()
    assert "match before ended: totals [30, 0, 12]; it began before this process connected" in line, line
    assert "seat -1" not in line and "placed" not in line and session.matches_ended == 0
    caplog.clear()
    asked = decision("resumed")  # decided in this process, its start unseen: its seat is the decision's
    assert handled(session, asked) is not None
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        handled(session, ended_with_forfeit("resumed", asked.decision.seat))
    seat = asked.decision.seat
    assert f"you (seat {seat}) placed" in caplog.records[0].getMessage() and session.matches_ended == 1
    assert "10 fault(s) of yours, FORFEITED" in caplog.records[0].getMessage()


async def _serve(connect: Any) -> Served:
    """A stand-in gateway whose Connect handler yields raw bytes (any message, or none)."""
    handlers = {"Connect": grpc.stream_stream_rpc_method_handler(connect, response_serializer=lambda data: data)}
    register = lambda server: server.add_generic_rpc_handlers(  # noqa: E731
        (grpc.method_handlers_generic_handler(SERVICE, handlers),)
    )
    return await create_server("127.0.0.1:0", [Service(SERVICE, register)])


async def _refusal(connect: Any) -> str:
    """The AgentError line ``connect_async`` ends with against a gateway running ``connect``."""
    served = await _serve(connect)
    try:
        with pytest.raises(AgentError) as refused:
            await asyncio.wait_for(connect_async(make_bot("random", 1), f"127.0.0.1:{served.port}", "t"), 30)
    finally:
        await stop_server(served, 0)
    return str(refused.value)


def _response(event: match_pb2.AgentEvent) -> bytes:
    return gateway_pb2.ConnectResponse(event=event).SerializeToString()


def test_bytes_that_are_no_message_are_one_line_and_the_agent_plays_on(caplog: pytest.LogCaptureFixture) -> None:
    """Before, a message that was not a ConnectResponse logged gRPC's traceback, then the agent
    ended with AttributeError: 'NoneType' object has no attribute 'event'."""
    answers: list[bytes] = []

    async def connect(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        await context.send_initial_metadata(((AGENT_ID_HEADER, "agent-1"),))
        yield b"\xff\xff\xff\xff\x0f"  # corrupt wire format
        yield _response(started())
        yield _response(decision())
        async for request in requests:
            answers.append(request)
            ended = match_pb2.AgentEvent()
            ended.match_ended.match_id = "m"
            yield _response(ended)

    async def run() -> None:
        served = await _serve(connect)
        try:
            await asyncio.wait_for(
                connect_async(make_bot("heuristic", 1), f"127.0.0.1:{served.port}", "t", matches=1), 20
            )
        finally:
            await stop_server(served, 0)

    with caplog.at_level(logging.WARNING):
        asyncio.run(run())
    assert len(answers) == 1 and gateway_pb2.ConnectRequest.FromString(answers[0]).action.decision_id == 1
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name in ("arena.sdk", "grpc._common")]
    assert len(warned) == 1 and "not a ConnectResponse" in warned[0].getMessage(), [r.getMessage() for r in warned]
    assert warned[0].exc_info is None


def test_headers_over_the_sdks_limit_are_not_called_a_rate_limit() -> None:
    """Before: 'the gateway ... rate limits this agent (RESOURCE_EXHAUSTED: ... metadata size exceeds
    hard limit ...): retry later', though no wait would help."""

    async def connect(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        await context.send_initial_metadata((("x-padding", "a" * 100_000),))
        await asyncio.sleep(3600)
        yield b""

    line = asyncio.run(_refusal(connect))
    assert "rate limit" not in line and "headers larger than this SDK takes" in line, line


def test_a_matchmaker_sending_bytes_that_are_no_message_is_one_line_and_the_ticket_holds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, the ticket's stream logged gRPC's traceback, then ended the agent with
    AttributeError: 'NoneType' object has no attribute 'match_id'."""
    service = matchmaker_pb2.DESCRIPTOR.services_by_name["MatchmakerService"].full_name

    async def watch_queue(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        await context.send_initial_metadata(((QUEUED_HEADER, "main"),))
        yield b"\xff\xff\xff\xff\x0f"
        yield matchmaker_pb2.WatchQueueResponse(match_id="seated-1", seat=2).SerializeToString()
        await asyncio.sleep(3600)

    async def run() -> list[str]:
        handlers = {"WatchQueue": grpc.unary_stream_rpc_method_handler(watch_queue, response_serializer=bytes)}
        register = lambda server: server.add_generic_rpc_handlers(  # noqa: E731
            (grpc.method_handlers_generic_handler(service, handlers),)
        )
        served = await create_server("127.0.0.1:0", [Service(service, register)])
        up, seated = asyncio.Event(), list[str]()
        up.set()
        holding = asyncio.create_task(hold_ticket(f"127.0.0.1:{served.port}", "t", "main", up, seated=seated))
        try:
            async with asyncio.timeout(20):
                while not seated and not holding.done():
                    await asyncio.sleep(0.01)
            if holding.done():
                holding.result()  # raises what ended it
        finally:
            holding.cancel()
            await stop_server(served, 0)
        return seated

    with caplog.at_level(logging.WARNING):
        assert asyncio.run(run()) == ["seated-1"]
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name in ("arena.sdk", "grpc._common")]
    assert len(warned) == 1 and "not a WatchQueueResponse" in warned[0].getMessage(), [r.getMessage() for r in warned]


def test_a_refusals_text_reaches_the_authors_terminal_without_control_characters() -> None:
    """Before, the AgentError (raised out of ``connect``, printed by Python with the script's
    traceback) quoted the server's status text as sent: escape sequences retitled or cleared the
    author's terminal."""

    async def connect(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, "no\x1b]0;pwned\x07\x1b[2J\nway")
        yield b""

    line = asyncio.run(_refusal(connect))
    assert "refused: no?]0;pwned??[2J?way" in line and line.isprintable(), repr(line)


def test_a_server_starting_matches_without_end_does_not_grow_the_session_without_bound() -> None:
    """Before, every MatchStarted (and every decision of a match never started) kept its rules,
    seat and decoder until the match ended: a server that never ends them grew the agent's memory
    without bound."""
    session = Session(make_bot("random", 1))
    for number in range(MAX_OPEN_MATCHES + 50):
        session.handle(started(f"m{number}"))
        handled(session, decision(f"d{number}"))
    assert len(session.rules) <= MAX_OPEN_MATCHES and len(session.seats) <= MAX_OPEN_MATCHES
    assert len(session.readers) <= MAX_OPEN_MATCHES
    assert f"m{MAX_OPEN_MATCHES + 49}" in session.rules  # the newest are kept


def test_a_match_id_no_platform_sends_is_refused_and_never_logged_whole(caplog: pytest.LogCaptureFixture) -> None:
    """Before, a 100,000-character match id was kept as the key of the match's state (1,000 of them
    at 4 MiB each: 4 GiB) and logged whole, a 100,000-character line in the author's terminal."""
    session = Session(make_bot("random", 1))
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        assert handled(session, started("x" * 100_000)) is None
        assert handled(session, decision("y" * 100_000)) is None
    assert session.rules == {} and session.readers == {}
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2 and all("cannot read" in line and len(line) < 1_200 for line in lines), lines


def test_an_endpoint_sent_bytes_that_are_no_request_refuses_them_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, anyone who could reach a ``serve``d agent printed gRPC's DecodeError traceback in the
    author's terminal with each such call, and was answered UNKNOWN."""

    async def run() -> grpc.aio.AioRpcError:
        served = await serve_async(make_bot("random", 1))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{served.port}") as channel:
                play = channel.stream_stream("/ohell.v1.AgentService/Play", request_serializer=bytes)
                call = play()
                await call.write(b"\xff\xff\xff\xff\x0f")
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    async for _ in call:
                        pass
                return refused.value
        finally:
            await stop_server(served, 0)

    with caplog.at_level(logging.WARNING):
        refused = asyncio.run(run())
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT and "not a PlayRequest" in (refused.details() or "")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


def test_a_matchmaker_naming_thousands_of_ladders_gives_a_refusal_of_a_few_lines() -> None:
    """Before, the AgentError for an unknown ladder named every ladder ListLadders returned: a
    hostile matchmaker's 20,000 names made it a line of 1.4 MB in the author's terminal."""
    service = matchmaker_pb2.DESCRIPTOR.services_by_name["MatchmakerService"].full_name

    async def watch_queue(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        await context.abort(grpc.StatusCode.NOT_FOUND, "ladder: no ladder 'main'")
        yield b""

    async def list_ladders(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        names = [f"ladder-{number:05d}-" + "x" * 56 for number in range(20_000)]
        return matchmaker_pb2.ListLaddersResponse(
            ladders=[matchmaker_pb2.Ladder(name=name) for name in names]
        ).SerializeToString()

    async def run() -> str:
        handlers = {
            "WatchQueue": grpc.unary_stream_rpc_method_handler(watch_queue, response_serializer=bytes),
            "ListLadders": grpc.unary_unary_rpc_method_handler(list_ladders, response_serializer=bytes),
        }
        register = lambda server: server.add_generic_rpc_handlers(  # noqa: E731
            (grpc.method_handlers_generic_handler(service, handlers),)
        )
        served = await create_server("127.0.0.1:0", [Service(service, register)])
        up = asyncio.Event()
        up.set()
        try:
            with pytest.raises(AgentError) as refused:
                await asyncio.wait_for(hold_ticket(f"127.0.0.1:{served.port}", "t", "main", up), 30)
        finally:
            await stop_server(served, 0)
        return str(refused.value)

    line = asyncio.run(run())
    assert "no ladder 'main'" in line and "ladder-00000-" in line and "and 19980 more" in line, line[:300]
    assert len(line) < 2_000, len(line)


class Recording:
    """A bot that keeps what it is asked (it must never be asked an impossible observation)."""

    name = "recording"

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def bid(self, observation: Any) -> int:
        self.asked.append(observation)
        return 0

    def play(self, observation: Any) -> int:
        self.asked.append(observation)
        return observation.legal_actions[0]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("hand_size", 2**31, "observation.hand_size: 2147483648"),
        ("hand_size", 18, "observation.hand_size: 18"),
        ("num_players", 2**31, "observation.num_players: 2147483648"),
        ("num_players", 2, "observation.num_players: 2"),
        ("seat", 3, "observation.seat: 3"),
        ("dealer", 9, "observation.dealer: 9"),
    ],
)
def test_an_observation_no_table_can_hold_never_reaches_the_bot(
    field: str, value: int, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the SDK handed the bot any hand size the server sent: the strong bot's search walks
    every (bid, tricks) pair up to it, and a hand of 2**31 cards held the agent for ever (20 s
    measured, not ended) on a single decision."""
    bot = Recording()
    session = Session(bot)
    session.handle(started())
    event = decision()
    setattr(event.decision.observation, field, value)
    with caplog.at_level(logging.WARNING, logger="arena.sdk"):
        assert handled(session, event) is None
    assert bot.asked == []
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "cannot read a decision event" in lines[0] and said in lines[0], lines
    assert handled(session, decision()) is not None and len(bot.asked) == 1  # the next one is played


def test_a_table_grown_after_a_checked_decision_of_the_hand_never_reaches_the_bot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK checked a hand's table only on its first decision (the reader keeps what stays fixed
    through a hand): a server sending num_players=2**31 on the next decision of the same hand was not
    refused, and a trick of thousands of cards at a table of 3 went through to the bot."""
    bot = Recording()
    session = Session(bot)
    session.handle(started())
    assert handled(session, decision()) is not None and len(bot.asked) == 1
    event = decision()
    event.decision.observation.num_players = 2**31
    for _ in range(50):
        event.decision.observation.current_trick.cards.add(suit=1, rank=2)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="arena.sdk"):
        assert handled(session, event) is None
    assert len(bot.asked) == 1
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "observation.num_players: 2147483648" in lines[0], lines


def test_a_hand_of_more_cards_than_its_size_never_reaches_the_bot() -> None:
    bot = Recording()
    session = Session(bot)
    session.handle(started())
    event = decision()
    for _ in range(100):
        event.decision.observation.hand.add(suit=1, rank=2)  # type: ignore[arg-type]
    assert handled(session, event) is None and bot.asked == []


def test_a_match_end_of_a_million_totals_and_faults_logs_a_few_short_lines(caplog: pytest.LogCaptureFixture) -> None:
    """Before, the totals went into the log line whole (the limit of 1,000 characters held for text
    alone): 500,000 totals were a line of 3.9 MB, and each of 20,000 faults of the seat a line."""
    session = Session(make_bot("random", 1))
    session.handle(started())
    ended = match_pb2.AgentEvent()
    ended.match_ended.match_id = "m"
    ended.match_ended.totals.extend(range(500_000))
    ended.match_ended.winners.extend(range(100_000))
    seat = session.seats["m"]
    for hand in range(20_000):
        ended.match_ended.faults.add(seat=seat, hand=hand, kind=match_pb2.FAULT_KIND_TIMEOUT, detail="slow")
    with caplog.at_level(logging.INFO, logger="arena.sdk"):
        session.handle(ended)
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) <= 12 and all(len(line) < 1_500 for line in lines), (len(lines), max(map(len, lines)))
    assert "20000 fault(s) of yours" in lines[0] and "19990 more" in lines[-1], lines[-1]
