"""Run the engine service: agent gateway, rules API, challenge and spectate on one gRPC server.

python -m services.engine --address 127.0.0.1:50051 --redis-url redis://...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import redis

from arena.keys import DEFAULT_PREFIX, PREFIX_ENV, Keys
from arena.play.specs import TimeControl
from arena.rpc.auth import HOST_TOKEN_ENV, load_host_token
from arena.rpc.metrics_http import start_metrics_server
from arena.rpc.server import serve_until_signal
from arena.rpc.settings import ConfigError, read_token_file, shown_url
from arena.sdk.arguments import host_port
from ohell.errors import OhHellError
from services.engine.server import start_engine


def _tokens(pairs: list[str], path: str | None = None) -> dict[str, str]:
    """token -> agent id, from ``--agent`` and the lines of ``--agents-file`` (blank and # lines
    skipped). An error names a file's line or an ``--agent`` by its number, never its text: that
    holds a token."""
    given = [(f"--agent #{n}", pair) for n, pair in enumerate(pairs, 1)]
    if path:
        lines = [
            (n, line.strip())
            for n, line in enumerate(read_token_file(path, "--agents-file", lines=True).splitlines(), 1)
        ]
        given += [(f"--agents-file {path}: line {n}", line) for n, line in lines if line and not line.startswith("#")]
    tokens: dict[str, str] = {}
    given_at: dict[str, str] = {}
    for where, pair in given:
        agent_id, sep, token = pair.partition("=")
        if not sep or not agent_id or not token:
            raise OhHellError(f"{where} must look like AGENT_ID=TOKEN")
        if tokens.get(token, agent_id) != agent_id:  # else whoever holds it would play as the later agent
            raise OhHellError(
                f"{where} gives agent {agent_id!r} the token {given_at[token]} gave agent {tokens[token]!r}:"
                " every agent needs a token of its own"
            )
        tokens[token], given_at[token] = agent_id, where
    return tokens


def run(args: argparse.Namespace) -> None:
    # built-in bots of challenges think in a thread: let it hand the GIL back to the event loop
    # every millisecond rather than every 5 (other callers' latency; bench/challenge.py)
    sys.setswitchinterval(0.001)
    tokens = _tokens(args.agent, args.agents_file)  # a bad file is said before anything starts

    async def serve() -> None:
        engine = await start_engine(
            args.address,
            tokens,
            args.redis_url or os.environ.get("REDIS_URL"),
            TimeControl(args.decision_ms, args.time_bank_ms, args.max_faults),
            keys=Keys(args.prefix),
            host_token=load_host_token(args.host_token_file),
            unix_socket=args.agent_socket,
        )
        if args.metrics_port is not None:
            _, _, port = start_metrics_server(args.metrics_port, args.metrics_address)
            print(f"metrics on http://{args.metrics_address}:{port}/metrics", flush=True)
        if engine.served.unix_socket is not None:
            print(f"engine service on unix socket {engine.served.unix_socket}", flush=True)
        print(f"engine service on port {engine.port}", flush=True)
        await serve_until_signal(engine.served, on_stop=engine.gateway.stop)
        await engine.close_redis()

    asyncio.run(serve())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m services.engine", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--address", type=host_port, default="127.0.0.1:50051", help="where to listen (default %(default)s)"
    )
    parser.add_argument(
        "--agent-socket",
        metavar="PATH",
        help="also listen on this unix socket, for the bot commands of this machine: only those who may enter "
        "its folder reach it (ohell up's is in its data folder, mode 700)",
    )
    parser.add_argument("--redis-url", help="relay and spectate through Redis (default: $REDIS_URL)")
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="AGENT_ID=TOKEN",
        help="accept this token for this agent (besides tokens registered in Redis); ps shows it to every user"
        " here: prefer --agents-file",
    )
    parser.add_argument(
        "--agents-file",
        metavar="PATH",
        help="accept the tokens of this file, one AGENT_ID=TOKEN a line, as --agent does (off the command line)",
    )
    parser.add_argument(
        "--prefix",
        default=Keys.from_env().prefix,
        help=f"Redis key prefix (default: ${PREFIX_ENV} or {DEFAULT_PREFIX!r})",
    )
    parser.add_argument("--host-token-file", help=f"read the host token from this file (default: ${HOST_TOKEN_ENV})")
    parser.add_argument(
        "--decision-ms", type=int, default=1000, help="ms an agent has per decision (default %(default)s)"
    )
    parser.add_argument(
        "--time-bank-ms", type=int, default=10_000, help="ms an agent may run over, in all (default %(default)s)"
    )
    parser.add_argument(
        "--max-faults", type=int, default=10, help="faults after which an agent forfeits (default %(default)s)"
    )
    parser.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on this port")
    parser.add_argument("--metrics-address", default="127.0.0.1", help="where /metrics listens (default %(default)s)")

    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except (OhHellError, ConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except redis.ConnectionError as error:  # the gateway subscribes to Redis as it starts
        url = args.redis_url or os.environ.get("REDIS_URL", "")
        print(f"error: cannot reach Redis at {shown_url(url)}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
