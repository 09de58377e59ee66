"""The web app's share of the services' rate limits, on real processes (redis-server, matchmaker,
engine, the web app under uvicorn without the host token): busy visitors, each within its own
limit, do not use up the budget every visitor's pages are read with; the web app's token reads
and nothing more."""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import WEB_TOKEN_ENV, auth_metadata

from .conftest import start_web

pytestmark = pytest.mark.slow  # starts the services and the web app as processes

LADDERS = 20  # the ladders page reads each one's leaderboard: 21 calls per page


@contextmanager
def public_site(
    redis_url: str,
    logs: Path,
    name: str,
    env: dict[str, str],
    setup: Callable[[Any, Any], None],
    host_pages: bool = False,
) -> Iterator[tuple[str, Stack]]:
    """A stack without workers (with ``env``, e.g. ``OHELL_RATE_LIMIT``),
    ``setup(stub, host metadata)`` done, and the web app on it as a host runs it on a public
    machine: with the web app's token, not the host token (unless ``host_pages``), behind a proxy on 127.0.0.1."""
    config = StackConfig(
        redis_url=redis_url,
        prefix=f"{name}{os.getpid()}:",
        builtin_workers=0,
        remote_worker=False,
        log_dir=str(logs),
        env=env,
    )
    stack = Stack(config).start()
    web = None
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            setup(matchmaker_pb2_grpc.MatchmakerServiceStub(channel), auth_metadata(stack.host_token))
        env = {name: value for name, value in stack.env().items() if host_pages or name != "OHELL_HOST_TOKEN"}
        env["OHELL_WEB_TRUSTED_PROXIES"] = "127.0.0.1"  # the tests' visitors come through X-Forwarded-For
        web, url = start_web(stack, logs / "web.log", env)
        yield url, stack
    finally:
        if web is not None:
            web.terminate()
            web.wait(10)
        stack.cleanup(graceful=False)


def create_ladders(stub: Any, host: Any) -> None:
    for n in range(LADDERS):
        ladder = pb.Ladder(name=f"l{n}", rules=rules_pb2.Rules(preset="classic"), seats=4)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)


@pytest.fixture(scope="module")
def site(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Stack]]:
    """The default limit per caller: 100 calls/s, bursts of 400."""
    with public_site(shared_redis_server.url, tmp_path_factory.mktemp("web-budget"), "budget", {}, create_ladders) as s:
        yield s


def visit(url: str, visitor: str) -> int:
    """One page as ``visitor`` (the web app takes the address from X-Forwarded-For, sent from 127.0.0.1, its proxy)."""
    request = urllib.request.Request(url, headers={"x-forwarded-for": visitor})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_busy_visitors_within_their_limits_do_not_fail_anyones_pages(site: tuple[str, Stack]) -> None:
    """Five visitors each load the ladders page 30 times at once (within their burst of 60; 21
    calls a page, 3,150 calls in all, where one caller may make 400 at once and 100 a second);
    another visitor meanwhile loads leaderboards. Each is within its own limit: every page loads."""
    url, _ = site
    busy = [f"10.9.0.{n}" for n in range(1, 6)]
    with ThreadPoolExecutor(12) as pool:
        pages = [pool.submit(visit, f"{url}/", visitor) for _ in range(30) for visitor in busy]
        wait(pages, return_when=FIRST_COMPLETED)  # the busy visitors' pages are under way
        other = [visit(f"{url}/ladders/l{n}", "10.9.1.1") for n in range(5)]
        statuses = [page.result() for page in pages]
    failed = {status: statuses.count(status) for status in set(statuses) if status != 200}
    assert not failed, f"busy visitors' pages failed (status: count): {failed}"
    assert other == [200] * 5


def test_the_web_apps_token_reads_and_nothing_more(site: tuple[str, Stack]) -> None:
    """The web app's token is no host token and no agent token: administration and agent RPCs refuse
    it, and its budget is its own (another token or none keeps 100 calls/s with bursts of 400)."""
    _, stack = site
    web_token = stack.env()[WEB_TOKEN_ENV]
    web = auth_metadata(web_token)
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        assert len(stub.ListLadders(pb.ListLaddersRequest(), metadata=web).ladders) == LADDERS
        ladder = pb.Ladder(name="nope", rules=rules_pb2.Rules(preset="classic"), seats=4)
        refusals = {
            "CreateLadder": lambda: stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=web),
            "PauseLadder": lambda: stub.PauseLadder(pb.PauseLadderRequest(name="l0"), metadata=web),
            "ListAgents": lambda: stub.ListAgents(pb.ListAgentsRequest(), metadata=web),
            "RegisterAgent": lambda: stub.RegisterAgent(
                pb.RegisterAgentRequest(name="x", kind=pb.AGENT_KIND_BUILTIN, bot="random"), metadata=web
            ),
            "JoinQueue": lambda: stub.JoinQueue(pb.JoinQueueRequest(ladder="l0", agent_id="a1"), metadata=web),
        }
        for name, call in refusals.items():
            with pytest.raises(grpc.RpcError) as refused:
                call()
            expected = grpc.StatusCode.UNAUTHENTICATED if name == "JoinQueue" else grpc.StatusCode.PERMISSION_DENIED
            assert refused.value.code() == expected, (name, refused.value.details())
        # ten at a time (~500 a second here): one caller is refused past 400 + 100/s, the web app not
        # in 1,500 calls (its burst alone is 8,000); the others go on until refused, at most 4,000
        for who, refused_some in ((web, False), (auth_metadata("not-the-web-token-" + "x" * 20), True), (None, True)):
            codes = calls(stub, who, 10, 400 if refused_some else 150, stop_when_refused=refused_some)
            assert ("RESOURCE_EXHAUSTED" in codes) == refused_some, (who, codes)
            assert codes <= {"OK", "RESOURCE_EXHAUSTED"}, codes


def calls(
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub, who: Any, threads: int, each: int, stop_when_refused: bool = False
) -> set[str]:
    """The status codes of up to ``threads`` x ``each`` GetLadder calls made as ``who`` (all of them,
    or until one is refused)."""
    refused = threading.Event()

    def run() -> list[str]:
        codes = []
        for _ in range(each):
            if stop_when_refused and refused.is_set():
                break
            try:
                stub.GetLadder(pb.GetLadderRequest(name="l0"), metadata=who, timeout=30)
                codes.append("OK")
            except grpc.RpcError as error:
                codes.append(error.code().name)
                refused.set()
        return codes

    with ThreadPoolExecutor(threads) as pool:
        return {code for codes in pool.map(lambda _: run(), range(threads)) for code in codes}


def create_tournament(stub: Any, host: Any) -> None:
    entrants = [tpb.TournamentEntrant(bot=bot) for bot in ("strong", "heuristic", "random")]
    request = tpb.CreateTournamentRequest(tournament=tpb.Tournament(tournament_id="final", entrants=entrants))
    stub.CreateTournament(request, metadata=host)


@pytest.fixture(scope="module")
def tight(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Stack]]:
    """A caller without a known token may make one call in 20 s; a tournament."""
    logs = tmp_path_factory.mktemp("web-tight")
    with public_site(shared_redis_server.url, logs, "tight", {"OHELL_RATE_LIMIT": "0.05:1"}, create_tournament) as s:
        yield s


def test_exports_are_read_with_the_web_apps_token(tight: tuple[str, Stack]) -> None:
    """The export went without the web app's token: as one anonymous caller from the web app's
    address, whose budget every other anonymous caller there (here: this test) could use up."""
    url, stack = tight
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        stub.ListLadders(pb.ListLaddersRequest())  # this address's one call
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListLadders(pb.ListLaddersRequest())
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert visit(f"{url}/tournaments/final", "10.9.2.1") == 200
    assert visit(f"{url}/tournaments/final/export.csv", "10.9.2.1") == 200


def test_visitors_using_up_the_web_apps_budget_leave_the_host_its_pages(
    shared_redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    """The web app's token may make 3 calls, then 1 every 20 s (a page of no ladders costs one). A
    signed-in host's pages read with the host token, which the matchmaker does not limit: before,
    they read with the web app's, and visitors (one /56 of IPv6 is 256 of them) could use it up."""
    env = {"OHELL_WEB_APP_RATE_LIMIT": "0.05:3"}
    with public_site(shared_redis_server.url, tmp_path, "hostreads", env, lambda stub, host: None, True) as (
        url,
        stack,
    ):
        assert [visit(f"{url}/", f"10.9.3.{n}") for n in range(4)] == [200, 200, 200, 429]
        form = urllib.parse.urlencode({"token": stack.host_token}).encode()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())  # keeps the session cookie
        with browser.open(urllib.request.Request(f"{url}/host/login", form), timeout=30) as signed_in:
            assert signed_in.url == f"{url}/host"  # the redirect followed, the session taken: not sent back to sign in
        for _ in range(3):
            with browser.open(f"{url}/host", timeout=30) as again:
                assert again.url == f"{url}/host" and again.status == 200
        assert visit(f"{url}/", "10.9.3.9") == 429  # the others' budget is as it was
