"""``ohell engine``, ``ohell challenge`` and ``ohell agent``: run the engine service, start an
ad-hoc match, connect or serve a built-in bot as a remote agent."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

from ohell.errors import OhHellError


def _tokens(pairs: list[str]) -> dict[str, str]:
    tokens = {}
    for pair in pairs:
        agent_id, sep, token = pair.partition("=")
        if not sep or not agent_id or not token:
            raise OhHellError(f"--agent {pair!r} must look like AGENT_ID=TOKEN")
        tokens[token] = agent_id
    return tokens


def cmd_engine(args: argparse.Namespace) -> int:
    from arena.services.common.metrics_http import start_metrics_server
    from arena.services.common.server import serve_until_signal
    from arena.services.engine.service import start_engine
    from arena.services.engine.specs import TimeControl

    async def run() -> None:
        engine = await start_engine(
            args.address, _tokens(args.agent), args.redis_url or os.environ.get("REDIS_URL"),
            TimeControl(args.decision_ms, args.time_bank_ms, args.max_faults),
        )  # fmt: skip
        if args.metrics_port is not None:
            _, _, port = start_metrics_server(args.metrics_port, args.metrics_address)
            print(f"metrics on http://{args.metrics_address}:{port}/metrics", flush=True)
        print(f"engine service on port {engine.port}", flush=True)
        await serve_until_signal(engine.served, on_stop=engine.gateway.stop)
        if engine.redis is not None:
            await engine.redis.aclose()

    asyncio.run(run())
    return 0


def _seat(text: str) -> Any:
    from arena.proto.ohell.v1 import challenge_pb2

    kind, sep, value = text.partition(":")
    fields = {"builtin": "builtin", "agent": "agent_id", "endpoint": "endpoint"}
    if not sep or kind not in fields or not value:
        raise OhHellError(f"--seat {text!r} must be builtin:NAME, agent:AGENT_ID or endpoint:HOST:PORT")
    return challenge_pb2.ChallengeSeat(**{fields[kind]: value})


def cmd_challenge(args: argparse.Namespace) -> int:
    import grpc

    from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, match_pb2, rules_pb2
    from arena.services.common.auth import auth_metadata

    request = challenge_pb2.ChallengeRequest(
        rules=rules_pb2.Rules(preset=args.rules), seats=[_seat(s) for s in args.seat], seed=args.seed,
        time_control=match_pb2.TimeControl(decision_ms=args.decision_ms),
    )  # fmt: skip
    with grpc.insecure_channel(args.address) as channel:
        try:
            response = challenge_pb2_grpc.ChallengeServiceStub(channel).Challenge(
                request, metadata=auth_metadata(args.token), timeout=args.timeout)
        except grpc.RpcError as error:
            print(f"challenge refused: {error.code().name}: {error.details()}")
            return 2
    record = response.record
    print(f"match {response.match_id}: totals {list(record.totals)}, winners {list(record.winners)}, "
          f"{len(record.faults)} fault(s)")
    if args.out:
        Path(args.out).write_text(json.dumps(json.loads(record.json), indent=1))
        print(f"record written to {args.out}")
    return 0


def cmd_agent(args: argparse.Namespace) -> int:
    from arena.sdk import connect, serve
    from ohell.bots import make_bot

    bot = make_bot(args.bot, args.seed)
    if args.serve:
        serve(bot, args.address, args.token)
    else:
        connect(bot, args.address, args.token)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    engine = sub.add_parser("engine", help="run the engine service (agent gateway, rules API, challenge, spectate)")
    engine.add_argument("--address", default="127.0.0.1:50051")
    engine.add_argument("--redis-url", help="relay and spectate through Redis (default: $REDIS_URL)")
    engine.add_argument("--agent", action="append", default=[], metavar="AGENT_ID=TOKEN",
                        help="accept this token for this agent (besides tokens registered in Redis)")
    engine.add_argument("--decision-ms", type=int, default=1000)
    engine.add_argument("--time-bank-ms", type=int, default=10_000)
    engine.add_argument("--max-faults", type=int, default=10)
    engine.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on this port")
    engine.add_argument("--metrics-address", default="127.0.0.1")
    engine.set_defaults(handler=cmd_engine)

    challenge = sub.add_parser("challenge", help="play an ad-hoc match on an engine service")
    challenge.add_argument("--address", default="127.0.0.1:50051")
    challenge.add_argument("--token", required=True, help="your agent token")
    challenge.add_argument("--seat", action="append", required=True,
                           help="builtin:NAME, agent:AGENT_ID or endpoint:HOST:PORT; 3-7 of them")
    challenge.add_argument("--rules", default="classic")
    challenge.add_argument("--seed", type=int, default=0)
    challenge.add_argument("--decision-ms", type=int, default=0)
    challenge.add_argument("--timeout", type=float, default=600.0)
    challenge.add_argument("--out", help="write the match record here")
    challenge.set_defaults(handler=cmd_challenge)

    agent = sub.add_parser("agent", help="play a built-in bot as a remote agent (connected, or --serve)")
    agent.add_argument("--bot", default="heuristic")
    agent.add_argument("--seed", type=int, default=0)
    agent.add_argument("--address", default="127.0.0.1:50051", help="the gateway, or with --serve where to listen")
    agent.add_argument("--token", default="")
    agent.add_argument("--serve", action="store_true", help="serve AgentService instead of dialling the gateway")
    agent.set_defaults(handler=cmd_agent)
