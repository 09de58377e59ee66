"""``python -m services.web``: the web app under uvicorn. Prints ``web service on port N`` once it
listens (as the gRPC services do), so ``ohell up`` and the tests can find a port chosen with 0."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import socket
import sys

import uvicorn

from arena.rpc.auth import HOST_TOKEN_ENV, WEB_TOKEN_ENV, load_host_token, load_web_token
from arena.rpc.settings import ConfigError, is_host_port
from services.web.api import Api
from services.web.app import create_app
from services.web.connections import guarded_protocol

TRUSTED_PROXIES_ENV = "OHELL_WEB_TRUSTED_PROXIES"
UVICORN_PROXIES_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's own name, which deployments set before this option


def host_token(path: str | None) -> str:
    """The host token of ``--host-token-file`` (an empty file would leave the site with no host), else
    ``$OHELL_HOST_TOKEN``, else ''; one shorter than the services take stops the start: it alone
    stands against guessing at the sign-in, which never refuses the right token."""
    try:
        return load_host_token(path) or ""
    except ConfigError as error:
        raise SystemExit(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m services.web", description=__doc__)
    parser.add_argument(
        "--address", default=os.environ.get("OHELL_WEB_ADDRESS", "127.0.0.1:8080"), help="host:port (port 0: any)"
    )
    parser.add_argument("--matchmaker", default=os.environ.get("OHELL_MATCHMAKER_ADDRESS", "127.0.0.1:50052"))
    parser.add_argument(
        "--engine", default=os.environ.get("OHELL_ENGINE_ADDRESS", "127.0.0.1:50051"), help="for live views"
    )
    parser.add_argument("--host-token-file", help=f"the host credential (default: ${HOST_TOKEN_ENV})")
    parser.add_argument(
        "--trusted-proxies",
        help="comma-separated addresses or networks of the reverse proxies whose X-Forwarded-For and "
        f"X-Forwarded-Proto are believed; default ${TRUSTED_PROXIES_ENV}, else "
        f"${UVICORN_PROXIES_ENV}, else none: the peer's own address and scheme",
    )
    return parser


def trusted_proxies(given: str | None) -> list[str]:
    """The proxies of ``--trusted-proxies`` (``given``), else of its variables ([] for none); SystemExit
    naming where the value came from (a deployment that set uvicorn's variable gave no flag) and an
    entry that is neither an IP address nor a network (uvicorn would take it for a name no peer
    has), and for '*': uvicorn then takes the first address of X-Forwarded-For, the one the visitor
    itself may have written (a proxy appends the address it saw), where with the proxies named it
    takes the last one that is not theirs."""
    where, value = "--trusted-proxies", given or ""
    for variable in (TRUSTED_PROXIES_ENV, UVICORN_PROXIES_ENV):
        if given is None and not value:
            where, value = f"${variable}", os.environ.get(variable, "")
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    if "*" in entries:
        raise SystemExit(
            f"{where}: '*' would believe an X-Forwarded-For the visitor wrote itself: "
            "name the proxies' addresses or networks (e.g. 10.0.0.0/8)"
        )
    networks = []
    for entry in entries:
        try:  # as a network: uvicorn took 10.0.0.1/8 (host bits set) for a name no peer has
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise SystemExit(f"{where}: {entry[:80]!r} is not an IP address or network") from None
    return networks


def parse_args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here: uvicorn's own bind failure (a port in use) left a task's
    SystemExit and two tracebacks in the log instead of one line."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [::1]
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    try:
        return socket.create_server((bare, port), family=family)
    except OSError as error:  # its strerror repeats the address: "... (while attempting to bind on address ...)"
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror or str(error)
        raise SystemExit(f"the web app cannot listen on {host}:{port}: {reason}") from None


async def serve(args: argparse.Namespace) -> None:
    if not is_host_port(args.address):
        raise SystemExit(f"--address {args.address!r} must be host:port with a port from 0 to 65535")
    host, _, port = args.address.rpartition(":")
    proxies = trusted_proxies(args.trusted_proxies)
    token = host_token(args.host_token_file)
    try:
        # reads for every visitor go as the web app (its own rate limit at the services), else as
        # the host (not limited), else as one anonymous caller, whose limit all visitors would share
        read_token = load_web_token() or token
        app = create_app(Api(args.matchmaker, args.engine, read_token=read_token), token)
    except ValueError as error:  # a malformed $OHELL_WEB_RATE_LIMIT or a short token: say which, no traceback
        raise SystemExit(str(error)) from None
    if not read_token:
        print(
            f"warning: no ${WEB_TOKEN_ENV} (nor host token): every visitor's reads count as one caller "
            "at the services (100 calls/s by default); give the services and the web app one web token",
            file=sys.stderr,
            flush=True,
        )
    listening = listen(host, int(port))
    # a visitor's address (its rate limit) and scheme (the host cookie's Secure flag) come from the
    # headers only of the proxies named: uvicorn believed any peer on 127.0.0.1 by default, so a
    # local user (or anything relaying for others) could be any visitor it liked
    config = uvicorn.Config(
        app,
        host=host,
        port=int(port),
        log_level="warning",
        access_log=False,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
        server_header=False,  # "server: uvicorn" on every answer told a visitor nothing it needs
        http=guarded_protocol(proxies),  # a deadline for each request's head, connections per address bounded
        # the app serves no WebSocket; with a WebSocket library installed ("auto") uvicorn would hand an
        # upgraded connection to a protocol of its own, whose close the guard's count never sees
        ws="none",
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    while not server.started:
        if serving.done():
            await serving
            raise SystemExit(f"the web app could not listen on {args.address}")
        await asyncio.sleep(0.02)
    bound = listening.getsockname()[1]
    print(f"web service on port {bound}", flush=True)
    await serving


def main(argv: list[str] | None = None) -> int:
    asyncio.run(serve(parse_args(sys.argv[1:] if argv is None else argv)))
    return 0
