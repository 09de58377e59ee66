"""``ohell challenge`` and ``ohell bot connect``: start an ad-hoc match, connect or serve a built-in bot or a
bot file as a remote agent. (Host commands on agents, ``ohell agent ...``, are in arena/local/admin.py.)"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from arena.rpc.data_folder import ENGINE_ADDRESS
from arena.rpc.files import write_named_file
from arena.rpc.settings import is_host_port
from arena.sdk.arguments import UINT32, UINT64, StackService, add_token_options, agent_token, whole
from ohell.errors import OhHellError


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
    from arena.rpc.auth import auth_metadata
    from arena.sdk.session import MAX_MATCH_ID, printable
    from arena.wire import record_from_json

    if args.out:  # checked first: a match played for a record that cannot be written is lost
        folder = Path(args.out).resolve().parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise OhHellError(f"--out {args.out}: {folder} is not a folder this user can write to")
    request = challenge_pb2.ChallengeRequest(
        rules=rules_pb2.Rules(preset=args.rules),
        seats=[_seat(s) for s in args.seat],
        seed=args.seed,
        time_control=match_pb2.TimeControl(decision_ms=args.decision_ms),
    )
    metadata = auth_metadata(agent_token(args))  # a bad token file is said before gRPC starts
    address = args.engine.address(args.address, "--address")
    with grpc.insecure_channel(address) as channel:
        try:
            response = challenge_pb2_grpc.ChallengeServiceStub(channel).Challenge(
                request, metadata=metadata, timeout=args.timeout
            )
        except grpc.RpcError as error:
            raise OhHellError(f"challenge refused: {error.code().name}: {error.details()}") from None
    record = response.record
    print(
        f"match {printable(response.match_id[:MAX_MATCH_ID])}: totals {list(record.totals)}, "
        f"winners {list(record.winners)}, {len(record.faults)} fault(s)"
    )
    if args.out:
        text = json.dumps(record_from_json(record.json, f"the engine at {address}"), indent=1)
        try:
            write_named_file(args.out, text)
        except OSError as error:
            raise OhHellError(f"cannot write the record to --out {args.out}: {error.strerror or error}") from None
        print(f"record written to {args.out}")
    return 0


DEFAULT_BOT = "heuristic"  # ohell bot connect's bot when none is given


def cmd_agent(args: argparse.Namespace) -> int:
    from arena.sdk import connect, serve
    from arena.sdk.local import bot_from_spec

    if args.serve and args.bot_given and is_host_port(args.bot_given):
        # bot run takes --serve HOST:PORT; here --serve is a switch and the address --address
        raise OhHellError(f"ohell bot connect --serve listens on --address: --serve --address {args.bot_given[:80]}")
    if args.open_to_anyone and not args.serve:
        raise OhHellError("--open-to-anyone is for an endpoint (--serve): a connected agent listens on nothing")
    if args.bot and args.bot_given:
        raise OhHellError(f"give the bot once: {args.bot_given} or --bot {args.bot}")
    spec, flag = (args.bot_given, "BOT") if args.bot_given else (args.bot or DEFAULT_BOT, "--bot")
    try:
        bot = bot_from_spec(spec, args.seed)
    except OhHellError as error:  # an unknown bot, a bot file that does not load
        raise OhHellError(f"{flag}: {error}") from None
    token = agent_token(args, required=False)  # an endpoint served without one takes any caller
    if args.serve:  # where to listen: a TCP address, the platform dials it
        if args.address and not is_host_port(args.address):
            raise OhHellError(f"--address {args.address[:80]!r}: with --serve, where to listen: HOST:PORT")
        serve(bot, args.address or ENGINE_ADDRESS, token, open_to_anyone=args.open_to_anyone)
    else:
        connect(bot, args.engine.address(args.address, "--address"), token)
    return 0


def register(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    bot_sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    engine: StackService,
) -> None:
    """``engine``: where the commands dial the engine service when given no --address."""
    challenge = sub.add_parser("challenge", help="play an ad-hoc match on an engine service")
    challenge.add_argument("--address", help=f"the engine service, HOST:PORT or unix:PATH (default: {engine.help()})")
    add_token_options(challenge)
    challenge.add_argument(
        "--seat", action="append", required=True, help="builtin:NAME, agent:AGENT_ID or endpoint:HOST:PORT; 3-7 of them"
    )
    challenge.add_argument("--rules", default="classic", help="a rules preset (default %(default)s)")
    challenge.add_argument(
        "--seed",
        type=whole(UINT64),
        default=0,
        help="the deal's seed (default 0: a secret one the engine draws; only a table of your own agent and"
        " built-in bots may choose one)",
    )
    challenge.add_argument(
        "--decision-ms", type=whole(UINT32), default=0, help="ms per decision (default %(default)s: the engine's)"
    )
    challenge.add_argument("--timeout", type=float, default=600.0, help="seconds to wait (default %(default)s)")
    challenge.add_argument("--out", help="write the match record here")
    challenge.set_defaults(handler=cmd_challenge, engine=engine)

    agent = bot_sub.add_parser(
        "connect",
        help="play a bot as a remote agent, no ladder: online on the gateway (for tournaments and challenges), "
        "or --serve",
    )
    agent.add_argument(
        "bot_given", nargs="?", metavar="BOT", help="the bot, as for ohell bot run: the same as --bot BOT"
    )
    agent.add_argument("--bot", help=f"a built-in bot or path/to/mybot.py:MyBot (default {DEFAULT_BOT})")
    agent.add_argument("--seed", type=int, default=0, help="the bot's seed (default %(default)s)")
    agent.add_argument(
        "--address",
        help=f"the gateway, HOST:PORT or unix:PATH (default: {engine.help()}); with --serve where to listen"
        f" (default {ENGINE_ADDRESS})",
    )
    add_token_options(agent, "the agent token", ", else none")
    agent.add_argument("--serve", action="store_true", help="serve AgentService instead of dialling the gateway")
    agent.add_argument(
        "--open-to-anyone",
        action="store_true",
        help="with --serve and no token: listen on an address other machines may dial all the same (anyone"
        " who reaches it may open Play streams to the bot; without this flag that is refused)",
    )
    agent.set_defaults(handler=cmd_agent, engine=engine)
