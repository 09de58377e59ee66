"""Agent decision round trips through the full path, against a raw grpc.aio bidi ping-pong.

    python bench/agents.py [--rounds 8] [--pings 300] [--concurrent 4] [--no-relay] [--python-only] [--loop uvloop]

Ours: the engine service (agent gateway) and the match host run in this process; a connected
agent (the SDK with a first-legal-action bot) runs in a subprocess and holds its stream. Each
classic game asks it 128 decisions (19 bids, 109 cards); the host times each decision from
building the request to having the answer checked (metrics' observe_decision), so the figure
covers observation building, protobuf encoding, the gateway hop, gRPC both ways, the SDK's decoding
and the bot. Raw: this process serves a bare bidi stream with byte messages, a client subprocess
echoes each message, and this side times each round trip. Rounds alternate between the two so
both see the same load on this shared machine, and in both this process is pinned to CPU 0 and the
subprocess to CPU 1 (placement alone moves a ping-pong by ~1.5x here). An info line gives the same
ping-pong with our messages (a mid-hand DecisionRequest out, an Action back, protobuf both ways,
no platform logic): the floor for this contract in Python. decisions/s: ``--concurrent`` matches at once,
each with its own agent stream (one agent subprocess), over their wall time. Unless ``--no-relay``:
decisions relayed through Redis pub/sub (a private redis-server), with the host in this process
(the gateway unregistered for it) and with the host in another process on this process's CPU (as in
a Celery worker); the latter's p50 is on the last line. ``--python-only``: nothing else, but the
Python work of a decision alone: host, gateway and SDK in this process, the gateway's stream a fake
that hands each message to an SDK ``Session`` (``--rounds`` games). ``--loop uvloop``: every process
of the run (this one, the agent, the echoes, the host) on uvloop instead of asyncio's own loop.

Last line: ``agents: ours_p50_ms=<..> raw_p50_ms=<..> ratio=<ours/raw> decisions_per_s=<..> [relayed_p50_ms=<..>]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
RAW_METHOD = "/bench.Raw/PingPong"
LOOP_ENV = "OHELL_BENCH_LOOP"  # the event loop of this run's every process (--loop)
TOKENS_ENV = "OHELL_BENCH_TOKENS"  # the agent subprocess's tokens, space-separated (not in argv: ps shows it)


def use_loop(name: str) -> None:
    """Run ``asyncio.run`` on ``name``'s event loop in this process."""
    if name == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def pin(cpu: int | None) -> None:
    """Keep this process (and the threads it starts later) on one CPU: on this 2-core machine
    a ping-pong is ~1.5x slower when both ends share a core, so each end gets its own."""
    if cpu is not None and hasattr(os, "sched_setaffinity") and cpu < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {cpu})


def child_cpu() -> list[str]:
    return ["--cpu", "1"] if (os.cpu_count() or 1) >= 2 else []


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def timing_decisions() -> Iterator[list[float]]:
    """The host's time of each connected seat's decision (metrics' ``observe_decision``) while inside."""
    from arena.play import host as host_module

    samples: list[float] = []
    original = host_module.metrics.observe_decision

    def timed(kind: str, seconds: float) -> None:
        if kind == "connected":
            samples.append(seconds)
        original(kind, seconds)

    host_module.metrics.observe_decision = timed  # type: ignore[method-assign]
    try:
        yield samples
    finally:
        host_module.metrics.observe_decision = original  # type: ignore[method-assign]


# ---------------------------------------------------------------- subprocess roles
class FirstLegal:
    name = "first-legal"

    def bid(self, observation):  # type: ignore[no-untyped-def]
        return observation.legal_bids[0]

    def play(self, observation):  # type: ignore[no-untyped-def]
        return observation.legal_actions[0]


async def agent_role(address: str, tokens: list[str]) -> None:
    from arena.sdk import connect_async

    await asyncio.gather(*(connect_async(FirstLegal(), address, token) for token in tokens))


async def host_role(redis_url: str, agent_id: str, games: int, seed: int) -> None:
    """A match host in its own process (as in a Celery worker): plays ``games`` classic games with
    ``agent_id`` in seat 0, reached through Redis, after one warm-up game; prints the decision times
    (seconds, one JSON list) on its last line."""
    from arena.play.host import host_match
    from arena.play.specs import SeatSpec, TimeControl
    from ohell.presets import preset

    with timing_decisions() as samples:
        seats = [SeatSpec.connected(agent_id), *[SeatSpec.builtin("random")] * 3]
        for number in range(games + 1):
            if number == 1:
                samples.clear()  # the first game warms up
            record = await host_match(
                f"relayed-{seed}-{number}",
                preset("classic"),
                seats,
                seed + number,
                spectate=False,
                time_control=TimeControl(decision_ms=5000),
                redis_url=redis_url,
            )
            assert not record["faults"], "the bench agent must not fault"
    print(json.dumps(samples))


async def echo_role(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(RAW_METHOD)()
        async for message in call:
            await call.write(message)


async def proto_echo_role(address: str) -> None:
    """Answers each decision with its first legal card: our messages, no SDK, no checks."""
    from arena.proto.ohell.v1 import gateway_pb2, match_pb2

    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            RAW_METHOD,
            request_serializer=gateway_pb2.ConnectRequest.SerializeToString,
            response_deserializer=gateway_pb2.ConnectResponse.FromString,
        )()
        async for response in call:
            decision = response.event.decision
            action = match_pb2.Action(
                match_id=decision.match_id,
                seat=decision.seat,
                decision_id=decision.decision_id,
                card=decision.legal_cards[0],
            )
            await call.write(gateway_pb2.ConnectRequest(action=action))


def sample_decision() -> Any:
    """A mid-hand classic decision as the platform sends it (for the protobuf reference)."""
    import random

    from arena.proto.ohell.v1 import gateway_pb2, match_pb2
    from arena.wire import card_to_proto, observation_to_proto
    from ohell.observation import observe
    from ohell.presets import preset
    from ohell.state import Game, Phase

    state, rng = Game(preset("classic"), 4).new_state(), random.Random(3)
    while state.phase != Phase.PLAY or len(state.tricks) < 2:
        state.chance_random(rng) if state.is_chance() else state.apply_action(state.legal_actions()[0])
    response = gateway_pb2.ConnectResponse()
    request = response.event.decision
    request.match_id, request.seat, request.decision_id = "bench", state.current, 1
    request.kind = match_pb2.DECISION_KIND_PLAY
    observation_to_proto(observe(state, state.current), 1000, out=request.observation)
    request.legal_cards.extend([card_to_proto(a) for a in state.legal_actions()])
    return response


# ---------------------------------------------------------------- python work only
class _InProcessStream:
    """A gateway stream context with no gRPC: a write hands the ConnectResponse bytes to an SDK
    ``Session`` here and queues its ConnectRequest for the gateway's reader."""

    def __init__(self) -> None:
        from arena.proto.ohell.v1 import gateway_pb2
        from arena.sdk.session import Session
        from arena.wire import wrapped

        self.session = Session(FirstLegal())
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        # imported once: an import in ``write`` ran importlib's Python code on every decision
        self.response, self.request, self.wrapped = gateway_pb2.ConnectResponse, gateway_pb2.ConnectRequest, wrapped

    async def write(self, data: bytes) -> None:
        action = self.session.handle(self.response.FromString(data).event)
        if action is not None:
            self.inbox.put_nowait(self.request.FromString(self.wrapped(action.SerializeToString())))

    async def read(self) -> Any:
        return await self.inbox.get()


async def python_only(games: int) -> list[float]:
    """Decision times of ``games`` classic games (after one warm-up game) with the gateway's stream
    replaced by ``_InProcessStream``: the host's, the gateway's and the SDK's Python work, no gRPC."""
    from arena.play.host import host_match
    from arena.play.relay import register_local_gateway, unregister_local_gateway
    from arena.play.specs import SeatSpec, TimeControl
    from ohell.presets import preset
    from services.engine.gateway import Connection, Gateway

    gateway = Gateway(tokens=None)  # type: ignore[arg-type]  # no Connect call: no tokens needed
    gateway.loop = asyncio.get_running_loop()
    connection = Connection("local", _InProcessStream())  # type: ignore[arg-type]
    gateway.connections["local"] = connection
    register_local_gateway(gateway)
    reader = asyncio.create_task(gateway._read(connection))
    try:
        seats = [SeatSpec.connected("local"), *[SeatSpec.builtin("random")] * 3]
        with timing_decisions() as samples:
            for number in range(games + 1):
                if number == 1:
                    samples.clear()  # the first game warms up
                record = await host_match(
                    f"local-{number}", preset("classic"), seats, number, spectate=False, time_control=TimeControl()
                )
                assert not record["faults"], "the bench agent must not fault"
        return samples
    finally:
        reader.cancel()
        unregister_local_gateway(gateway)


# ---------------------------------------------------------------- ours
class Ours:
    """The engine service and match host here, one agent subprocess holding ``streams`` streams."""

    def __init__(self, streams: int, redis_url: str | None = None) -> None:
        self.streams = streams
        self.redis_url = redis_url
        self.samples: list[float] = []

    async def start(self) -> None:
        from arena.play import host as host_module
        from services.engine.server import start_engine

        self.original = host_module.metrics.observe_decision

        def timed(kind: str, seconds: float) -> None:  # the host times each decision here
            if kind == "connected":
                self.samples.append(seconds)
            self.original(kind, seconds)

        host_module.metrics.observe_decision = timed  # type: ignore[method-assign]
        tokens = {f"token-{i}": f"bench-{i}" for i in range(self.streams)}
        self.engine = await start_engine(tokens=tokens, redis_url=self.redis_url)
        self.agent = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--role",
                "agent",
                "--address",
                f"127.0.0.1:{self.engine.port}",
                *child_cpu(),
            ],
            cwd=ROOT,
            env=os.environ | {TOKENS_ENV: " ".join(tokens)},
        )
        while len(self.engine.gateway.connections) < self.streams:
            await asyncio.sleep(0.02)
        await self.play(1, seed=0)  # warm up
        self.samples.clear()

    async def play(self, matches: int, seed: int, relay: bool = False) -> float:
        """Play ``matches`` classic games at once; returns their wall time. ``relay``: reach the
        agent through Redis, as a match host in another process (a Celery worker) does."""
        from arena.play.host import host_match
        from arena.play.relay import register_local_gateway, unregister_local_gateway
        from arena.play.specs import SeatSpec, TimeControl
        from ohell.presets import preset

        def seats(i: int) -> list[SeatSpec]:
            return [SeatSpec.connected(f"bench-{i}"), *[SeatSpec.builtin("random")] * 3]

        if relay:
            unregister_local_gateway(self.engine.gateway)
        try:
            began = time.perf_counter()
            records = await asyncio.gather(
                *(
                    host_match(
                        f"bench-{seed}-{i}",
                        preset("classic"),
                        seats(i),
                        seed + i,
                        spectate=False,
                        time_control=TimeControl(decision_ms=5000),
                        redis_url=self.redis_url if relay else None,
                    )
                    for i in range(matches)
                )
            )
            assert all(not record["faults"] for record in records), "the bench agent must not fault"
            return time.perf_counter() - began
        finally:
            if relay:
                register_local_gateway(self.engine.gateway)

    async def play_elsewhere(self, games: int, seed: int) -> list[float]:
        """``games`` games hosted by another process (pinned to this process's CPU) that reaches the
        agent through Redis and this process's gateway, as a Celery worker does; its decision times."""
        assert self.redis_url is not None
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--role",
            "host",
            "--redis",
            self.redis_url,
            "--games",
            str(games),
            "--seed",
            str(seed),
            "--cpu",
            "0",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        output, _ = await child.communicate()
        if child.returncode != 0:
            raise RuntimeError(f"the host process failed ({child.returncode})")
        return [float(s) for s in json.loads(output.decode().strip().splitlines()[-1])]

    async def stop(self) -> None:
        from arena.play import host as host_module

        self.agent.terminate()
        self.agent.wait()
        host_module.metrics.observe_decision = self.original  # type: ignore[method-assign]
        await self.engine.stop(0)


# ---------------------------------------------------------------- raw
class Raw:
    """A bare bidi stream of 64-byte messages: this side writes and times, a subprocess echoes.
    With ``proto``: our messages instead (a mid-hand DecisionRequest out, an Action back),
    serialized by protobuf, with no platform logic on either side."""

    def __init__(self, proto: bool = False) -> None:
        self.proto = proto
        self.samples: list[float] = []
        self.requests: asyncio.Queue[int] = asyncio.Queue()
        self.finished: asyncio.Queue[None] = asyncio.Queue()

    async def start(self) -> None:
        async def ping_pong(request_iterator, context):  # type: ignore[no-untyped-def]
            payload = sample_decision() if self.proto else b"x" * 64
            while True:
                count = await self.requests.get()
                for _ in range(count):
                    began = time.perf_counter()
                    await context.write(payload)
                    await context.read()
                    self.samples.append(time.perf_counter() - began)
                self.finished.put_nowait(None)

        serializers = {}
        if self.proto:
            from arena.proto.ohell.v1 import gateway_pb2

            serializers = {
                "request_deserializer": gateway_pb2.ConnectRequest.FromString,
                "response_serializer": gateway_pb2.ConnectResponse.SerializeToString,
            }
        handler = grpc.method_handlers_generic_handler(
            "bench.Raw", {"PingPong": grpc.stream_stream_rpc_method_handler(ping_pong, **serializers)}
        )
        self.server = grpc.aio.server()
        self.server.add_generic_rpc_handlers((handler,))
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.echo = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--role",
                "proto-echo" if self.proto else "echo",
                "--address",
                f"127.0.0.1:{port}",
                *child_cpu(),
            ],
            cwd=ROOT,
        )
        await self.ping(200)  # warm up
        self.samples.clear()

    async def ping(self, count: int) -> None:
        self.requests.put_nowait(count)
        await asyncio.wait_for(self.finished.get(), 120)

    async def stop(self) -> None:
        self.echo.terminate()
        self.echo.wait()
        await self.server.stop(0)


async def measure(rounds: int, pings: int, concurrent: int, redis_url: str | None) -> dict[str, Any]:
    """Rounds alternate raw ping-pong and one match at a time, so both see the same machine load."""
    raw, proto, ours = Raw(), Raw(proto=True), Ours(concurrent, redis_url)
    await raw.start()
    await proto.start()
    await ours.start()
    try:
        for number in range(rounds):
            await raw.ping(pings)
            await proto.ping(pings)
            await ours.play(1, seed=1000 + number)
        result: dict[str, Any] = {"raw": raw.samples, "proto": proto.samples, "ours": list(ours.samples)}
        ours.samples.clear()
        wall = await ours.play(concurrent, seed=5000)
        result["per_second"] = len(ours.samples) / wall
        if redis_url:
            ours.samples.clear()
            for number in range(max(1, rounds // 4)):
                await ours.play(1, seed=9000 + number, relay=True)
            result["relayed"] = list(ours.samples)
            result["elsewhere"] = await ours.play_elsewhere(max(1, rounds // 4), seed=9500)
        return result
    finally:
        await ours.stop()
        await proto.stop()
        await raw.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds: raw pings, then one match")
    parser.add_argument("--pings", type=int, default=300, help="raw round trips per round")
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--no-relay", action="store_true", help="skip the Redis relay figure (info only)")
    parser.add_argument(
        "--python-only",
        action="store_true",
        help="only the Python work of a decision: host, gateway and SDK in this process, no gRPC",
    )
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="event loop of every process: ours and the raw reference alike (uvloop: pip install uvloop)",
    )
    parser.add_argument(
        "--role", choices=["bench", "agent", "echo", "proto-echo", "host"], default="bench", help=argparse.SUPPRESS
    )
    parser.add_argument("--redis", help=argparse.SUPPRESS)
    parser.add_argument("--games", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin(args.cpu if args.role != "bench" else 0)
    if args.role == "bench":
        os.environ[LOOP_ENV] = args.loop  # the subprocesses (agent, echo, host) run on the same loop
    use_loop(os.environ.get(LOOP_ENV, "asyncio"))
    if args.role == "agent":
        asyncio.run(agent_role(args.address, os.environ[TOKENS_ENV].split()))
        return 0
    if args.role == "host":
        asyncio.run(host_role(args.redis, "bench-0", args.games, args.seed))
        return 0
    if args.role == "echo":
        asyncio.run(echo_role(args.address))
        return 0
    if args.role == "proto-echo":
        asyncio.run(proto_echo_role(args.address))
        return 0
    if args.python_only:
        samples = asyncio.run(python_only(args.rounds))
        print(
            f"python work only (host, gateway and SDK in one process, no gRPC): {len(samples)} decisions, "
            f"p50 {statistics.median(samples) * 1e6:.1f} us, p99 {percentile(samples, 0.99) * 1e6:.1f} us"
        )
        return 0
    redis = None
    if not args.no_relay:
        from arena.embedded_redis import EmbeddedRedis

        redis = EmbeddedRedis(appendonly=False).start()
    try:
        result = asyncio.run(measure(args.rounds, args.pings, args.concurrent, redis.url if redis else None))
    finally:
        if redis is not None:
            redis.cleanup()
    raw, ours, per_second = result["raw"], result["ours"], result["per_second"]
    raw_p50, ours_p50 = statistics.median(raw) * 1000, statistics.median(ours) * 1000
    print(
        f"raw grpc.aio bidi ping-pong: {len(raw)} round trips, p50 {raw_p50:.3f} ms, "
        f"p99 {percentile(raw, 0.99) * 1000:.3f} ms"
    )
    proto_samples = result["proto"]
    print(
        f"info: the same ping-pong with our messages (DecisionRequest out, Action back, no platform logic): "
        f"p50 {statistics.median(proto_samples) * 1000:.3f} ms, p99 {percentile(proto_samples, 0.99) * 1000:.3f} ms"
    )
    if "relayed" in result:
        for key, where in [("relayed", "in this process"), ("elsewhere", "in another process (as a Celery worker)")]:
            relayed = result[key]
            print(
                f"relayed through Redis pub/sub, host {where}: {len(relayed)} decisions, "
                f"p50 {statistics.median(relayed) * 1000:.3f} ms, p99 {percentile(relayed, 0.99) * 1000:.3f} ms, "
                f"ratio to raw {statistics.median(relayed) * 1000 / raw_p50:.2f}"
            )
    print(
        f"ours (host -> gateway -> agent -> gateway -> host): {len(ours)} decisions, p50 {ours_p50:.3f} ms, "
        f"p99 {percentile(ours, 0.99) * 1000:.3f} ms; {args.concurrent} matches at once: "
        f"{per_second:.0f} decisions/s"
    )
    relayed = f" relayed_p50_ms={statistics.median(result['elsewhere']) * 1000:.3f}" if "elsewhere" in result else ""
    print(f"event loop of every process (ours and the raw reference): {args.loop}")
    print(
        f"agents: ours_p50_ms={ours_p50:.3f} raw_p50_ms={raw_p50:.3f} ratio={ours_p50 / raw_p50:.2f} "
        f"decisions_per_s={per_second:.0f}{relayed}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
