"""Run the matchmaker: the gRPC service plus its forming/recovery loop and the tournament sweep in threads.

python -m services.matchmaker --address 127.0.0.1:50052 --redis-url redis://...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading

from arena.archive.db import DATABASE_URL_ENV
from arena.keys import DEFAULT_PREFIX, PREFIX_ENV, Keys
from arena.ladder import archiving, loop, settings
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import (
    BATCH_ENV,
    DEFAULT_BATCH,
    MAX_BATCH,
    batch_size,
    celery_senders,
    make_celery,
    tourney_dispatcher,
)
from arena.proto.ohell.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from arena.rpc.auth import HOST_TOKEN_ENV, load_host_token, load_web_token
from arena.rpc.ratelimit import CallGuard, Limiter, RateLimit
from arena.rpc.server import Service, create_server, serve_until_signal
from arena.rpc.settings import ConfigError
from arena.sdk.arguments import host_port
from arena.tournament import jobs as tourney_jobs
from arena.tournament.store import TournamentStore
from services.matchmaker.servicer import MatchmakerServicer

REGISTRATIONS = RateLimit(rate=1 / 60, burst=5)  # self-registrations per caller: 5 at once, then 1 a minute
SERVICE_NAME = matchmaker_pb2.DESCRIPTOR.services_by_name["MatchmakerService"].full_name


async def serve(args: argparse.Namespace) -> None:
    import redis.asyncio as aioredis

    settings.check()  # the forming loop reads them each round: a malformed one stops the start instead
    try:  # --batch, else $OHELL_MATCH_BATCH: a malformed one is said in one line, before anything starts
        batch = args.batch or batch_size()
    except ValueError as error:
        raise settings.SettingError(str(error)) from None
    keys = Keys(args.prefix)
    host_token = load_host_token(args.host_token_file)
    web_token = load_web_token()  # the web app's: its own rate limit, no more rights than anonymous
    limits_client = aioredis.Redis.from_url(args.redis_url)
    guard = CallGuard.from_env(limits_client, keys, host_token, web_token)
    store = RedisStore.connect(args.redis_url, keys)
    registrations = Limiter(REGISTRATIONS, limits_client, keys)  # open self-registration, per caller
    tourney_store = TournamentStore.connect(args.redis_url, keys)
    tourney_dispatch = tourney_dispatcher(make_celery(args.redis_url, prefix=args.prefix), args.prefix)
    servicer = MatchmakerServicer(
        store,
        host_token=host_token,
        web_token=web_token,
        registrations=registrations,
        database_url_=args.database_url,
        tourneys=tourney_store,
        tourney_dispatch=tourney_dispatch,
    )
    service = Service(
        SERVICE_NAME, lambda server: matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(servicer, server)
    )
    served = await create_server(args.address, [service], interceptors=[guard], unix_socket=args.admin_socket)
    stopping = threading.Event()
    worker = None
    if not args.no_forming:
        await _raise_match_seq(store, servicer)
        # the batch size travels with each batch task: the workers' next batches take it too
        dispatch, rate, archive = celery_senders(args.redis_url, args.prefix, batch)
        sweep = loop.SweepPolicy(redispatch_after_s=args.redispatch_after)
        worker = threading.Thread(
            target=loop.run_forever,
            args=(store, dispatch, rate, stopping.is_set),
            kwargs={
                "tick_s": args.tick,
                "sweep_every_s": args.sweep_every,
                "sweep_policy": sweep,
                "archive": archive,
                "batch": batch,
            },
            daemon=True,
            name="forming",
        )
        worker.start()
        threading.Thread(  # tournament tables whose worker died: sent again (arena.tournament.jobs.sweep)
            target=tourney_jobs.sweep_forever,
            args=(tourney_store, tourney_dispatch, stopping.is_set, args.sweep_every, args.redispatch_after),
            daemon=True,
            name="tournament-sweep",
        ).start()
    if args.metrics_port is not None:
        from arena.rpc.metrics_http import start_metrics_server

        _, _, port = start_metrics_server(args.metrics_port, args.metrics_address)
        print(f"metrics on http://{args.metrics_address}:{port}/metrics", flush=True)
    if served.unix_socket is not None:
        print(f"matchmaker service on unix socket {served.unix_socket}", flush=True)
    print(f"matchmaker service on port {served.port}", flush=True)
    await serve_until_signal(served, on_stop=stopping.set)
    if worker is not None:
        worker.join(timeout=5)
    await limits_client.aclose()


async def _raise_match_seq(store: RedisStore, servicer: MatchmakerServicer) -> None:
    """Raise the match counter to the archive's highest match number before forming any table: a
    Redis that lost the counter (or was wiped while the archive was kept) would hand out archived
    ids. With the archive away the start goes on: the archive then refuses a reused id, keeps the
    match in Redis and raises the counter itself."""
    try:
        counter = await asyncio.to_thread(lambda: archiving.raise_match_seq(store, servicer.archive()))
    except Exception as error:  # noqa: BLE001 - any failure of the database: said, and the start goes on
        print(f"match counter not checked against the archive ({type(error).__name__}): {error}", flush=True)
        return
    print(f"match counter at {counter} (at least the archive's highest match number)", flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m services.matchmaker", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--address", type=host_port, default="127.0.0.1:50052", help="where to listen (default %(default)s)"
    )
    parser.add_argument(
        "--admin-socket",
        metavar="PATH",
        help="also listen on this unix socket, for the host's commands and the bot commands of this machine: "
        "only those who may enter its folder reach it (ohell up's is in its data folder, mode 700)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="default: $REDIS_URL, else redis://127.0.0.1:6379/0",
    )
    parser.add_argument(
        "--prefix",
        default=Keys.from_env().prefix,
        help=f"Redis key prefix (default: ${PREFIX_ENV} or {DEFAULT_PREFIX!r})",
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get(DATABASE_URL_ENV),
        help=f"the match archive (default: ${DATABASE_URL_ENV}, else a SQLite file in the working directory)",
    )
    parser.add_argument("--tick", type=float, default=0.05, help="seconds between forming rounds")
    parser.add_argument("--sweep-every", type=float, default=2.0, help="seconds between recovery sweeps")
    parser.add_argument(
        "--batch",
        type=batch_size,
        default=None,
        help=f"all-built-in matches formed together per worker task, 1 to {MAX_BATCH}; the workers' "
        f"next batches take the same size (default: ${BATCH_ENV} or {DEFAULT_BATCH}; 1 = one match per task)",
    )
    parser.add_argument(
        "--redispatch-after",
        type=float,
        default=30.0,
        help="send a queued match or table again when no worker started it within this many seconds "
        "(doubled for each copy no worker started, up to 64 times)",
    )
    parser.add_argument(
        "--host-token-file",
        help=f"read the host token (administration RPCs) from this file (default: ${HOST_TOKEN_ENV})",
    )
    parser.add_argument("--no-forming", action="store_true", help="serve the API only (another replica forms)")
    parser.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on this port")
    parser.add_argument("--metrics-address", default="127.0.0.1", help="where /metrics listens (default %(default)s)")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        asyncio.run(serve(build_parser().parse_args(argv)))
    except (ConfigError, settings.SettingError) as error:  # a setting it cannot use: say which, no traceback
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
