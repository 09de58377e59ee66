"""The web tests' real parts: the stack (Redis, matchmaker, Celery workers, engine), a ladder with
finished matches, the web app under uvicorn (its own process, port 0), and Debian's Chromium driven
by Playwright. One of each per module: starting them is the slow part."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata

from ..ladder.helpers import settle

CHROMIUM = "/usr/bin/chromium"
SCREENS = Path(__file__).parent / "screens"  # ignored by git: what each page looked like in the last run
HOST_TOKEN = "host-secret-for-tests"
LADDER = "web"
BOTS = ("strong", "heuristic", "heuristic", "random", "random")


@dataclass
class Site:
    url: str
    stack: Stack
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub
    agents: dict[str, str]  # agent id -> name of the ladder's agents


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


def start_web(stack: Stack, log_path: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """The web app on the stack, with ``env`` (default: this process's, and the tests' host token)."""
    env = (dict(os.environ) | {"OHELL_HOST_TOKEN": HOST_TOKEN} if env is None else env) | {"PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "services.web", "--address", "127.0.0.1:0"]
    command += ["--matchmaker", stack.matchmaker_address, "--engine", stack.engine_address]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: "web service on port" in log_path.read_text() or process.poll() is not None, 30, "the web app")
    found = re.search(r"web service on port (\d+)", log_path.read_text())
    assert found, log_path.read_text()
    return process, f"http://127.0.0.1:{found.group(1)}"


@dataclass
class TourneySite:
    url: str
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub


@contextmanager
def web_on_stack(
    config: StackConfig, prepare: Callable[[Stack, Any], None] | None = None
) -> Iterator[tuple[Stack, Any, str]]:
    """(the stack of ``config``, a matchmaker stub, the URL of the web app on it), stopped after;
    ``prepare(stack, stub)`` runs before the web app starts. Its log: web.log in ``config.log_dir``."""
    stack = Stack(config).start()
    web = None
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            if prepare is not None:
                prepare(stack, stub)
            web, url = start_web(stack, stack.log_dir / "web.log")
            yield stack, stub, url
    finally:
        if web is not None:
            web.terminate()
            web.wait(10)
        stack.cleanup(graceful=False)


@contextmanager
def tournament_site(config: StackConfig) -> Iterator[TourneySite]:
    """The stack of ``config`` (its logs in ``config.log_dir``) and the web app on it, stopped after."""
    with web_on_stack(config) as (_, stub, url):
        yield TourneySite(url, stub)


@pytest.fixture(scope="module")
def web_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """(host, port) of the web app alone: nothing behind it (the services' addresses lead nowhere)."""
    nowhere = SimpleNamespace(matchmaker_address="127.0.0.1:1", engine_address="127.0.0.1:1")
    process, url = start_web(nowhere, Path(tmp_path_factory.mktemp("web")) / "web.log")  # type: ignore[arg-type]
    try:
        host, _, port = url.removeprefix("http://").partition(":")
        yield host, int(port)
    finally:
        process.terminate()
        process.wait(10)


def play_ladder(stub: matchmaker_pb2_grpc.MatchmakerServiceStub, store: RedisStore, matches: int) -> dict[str, str]:
    """A small-game ladder of built-in agents with at least ``matches`` finished (and rated) matches,
    none in play (``store``: the stack's keys)."""
    rules = rules_pb2.Rules(preset="classic", hand_sizes=[4, 3, 2])
    host = auth_metadata(HOST_TOKEN)
    ladder = pb.Ladder(name=LADDER, rules=rules, seats=4, base_window=50)
    stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
    agents, tokens = {}, {}
    for index, bot in enumerate(BOTS):
        request = pb.RegisterAgentRequest(name=f"{bot}-{index}", kind=pb.AGENT_KIND_BUILTIN, bot=bot)
        reply = stub.RegisterAgent(request, metadata=host)
        agents[reply.agent.agent_id], tokens[reply.agent.agent_id] = reply.agent.name, reply.token
    for agent_id, token in tokens.items():
        stub.JoinQueue(pb.JoinQueueRequest(ladder=LADDER, agent_id=agent_id), metadata=auth_metadata(token))

    def rated() -> int:
        board = stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder=LADDER))
        return sum(s.games for s in board.standings) // 4

    wait_until(lambda: rated() >= matches, 60, f"{matches} rated matches")
    for agent_id, token in tokens.items():
        stub.LeaveQueue(pb.LeaveQueueRequest(ladder=LADDER, agent_id=agent_id), metadata=auth_metadata(token))
    settle(store, [LADDER], 60)  # the matches in play finish and are rated
    return agents


@pytest.fixture(scope="module")
def site(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    logs = tmp_path_factory.mktemp("web-stack")
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=f"web{secrets.token_hex(4)}:",  # each module's stack its own keys on the shared Redis
        env={"OHELL_MATCH_LEASE_S": "1.5"},
        matchmaker_args=("--sweep-every", "0.5", "--tick", "0.02"),
        log_dir=str(logs),
        host_token=HOST_TOKEN,
    )
    agents: dict[str, str] = {}

    def play(stack: Stack, stub: Any) -> None:
        store = RedisStore(redis.Redis.from_url(shared_redis_server.url), Keys(config.prefix))
        try:
            agents.update(play_ladder(stub, store, 8))
        finally:
            store.client.close()

    with web_on_stack(config, play) as (stack, stub, url):
        yield Site(url, stack, stub, agents)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()


def screenshot(tab: Any, name: str) -> None:
    """Save the page at 1280 px and 390 px wide (tests/web/screens/NAME-1280.png, NAME-390.png)."""
    SCREENS.mkdir(exist_ok=True)
    for width in (1280, 390):
        tab.set_viewport_size({"width": width, "height": 900})
        tab.screenshot(path=str(SCREENS / f"{name}-{width}.png"), full_page=True)
        overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} at {width} px is wider than the window by {overflow} px"
    tab.set_viewport_size({"width": 1280, "height": 900})


def serve_pages(tab: Any, pages: dict[str, tuple[str, str]], asked: Any = None) -> None:
    """Answer the tab's requests to http://web.test: the app's static files from its folder, each path
    of ``pages`` with its (body, content type), ``asked(path)`` (a callable: an answer or None) first
    when given, anything else 404; no web app, no stack."""
    from services.web.pages import HERE

    def serve(route: Any) -> None:
        path = route.request.url.removeprefix("http://web.test")
        answer = asked(path) if asked else None
        if answer is not None:
            route.fulfill(**answer)
        elif path.startswith("/static/"):
            kind = "text/css" if path.endswith(".css") else "text/javascript"
            route.fulfill(path=str(HERE / path.lstrip("/")), content_type=kind)
        elif path in pages:
            body, kind = pages[path]
            route.fulfill(body=body, content_type=kind)
        else:
            route.fulfill(status=404)

    tab.route("http://web.test/**", serve)
