"""Helpers of the ladder tests (imported relatively: ``from .helpers import ...``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack


def builtin_ladder(
    store: RedisStore, name: str = "t", bots: tuple[str, ...] = ("heuristic", "random") * 4, **options: object
) -> list[str]:
    """A small-game ladder of built-in agents, all enrolled; returns their agent ids."""
    settings = {"overrides": {"hand_sizes": [3, 2]}, "base_window": 50.0} | options
    store.create_ladder(Ladder(name, **settings))  # type: ignore[arg-type]
    ids = []
    for index, bot in enumerate(bots):
        agent, _ = store.register_agent(f"{name}-{bot}-{index}", "builtin", bot=bot)
        store.join(name, agent.agent_id, None, enroll=True)
        ids.append(agent.agent_id)
    return ids


def wait_until(
    condition: Callable[[], object],
    timeout: float,
    what: str,
    poll: float = 0.05,
    report: Callable[[], str] | None = None,
) -> None:
    """Wait for ``condition``; a timeout says what ``report`` returns (the state worth seeing)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            details = f"\n{report()}" if report is not None else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{details}")
        time.sleep(poll)


def seating_report(stack: Stack, store: RedisStore, ladder: str, agents: dict[str, Path]) -> str:
    """For a connected agent that is not seated: its presence, ticket and busy keys, the queue, the
    agent process's output (``agents``: agent id -> its log file) and the stack's logs."""
    lines = [f"queue {ladder}: {store.client.zrange(store.keys.queue(ladder), 0, -1, withscores=True)}"]
    for agent_id, log in agents.items():
        presence = store.client.get(store.keys.agent_presence(agent_id))
        ticket = store.has_ticket(ladder, agent_id)
        lines.append(f"agent {agent_id}: presence={presence!r} ticket={ticket} busy={store.busy_match(agent_id)!r}")
        lines.append(log.read_text(errors="replace")[-2000:] if log.exists() else "(no output file)")
    return "\n".join(lines) + "\n" + stack.log_tails(2000)


def settle(store: RedisStore, ladders: list[str], timeout: float = 30.0) -> None:
    """Wait until no match is in play and every logged match is rated."""
    wait_until(
        lambda: not store.active_matches() and not any(store.ratings_behind(name) for name in ladders),
        timeout,
        "matches in play to finish and be rated",
    )


def leave_all(store: RedisStore, ladder: str, agent_ids: list[str]) -> None:
    for agent in agent_ids:
        store.leave(ladder, agent)


def scrape(port: int, metric: str) -> float:
    """Sum of every sample of ``metric`` served at ``http://127.0.0.1:port/metrics``."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == metric
    )


def match_state(stack: Stack, store: RedisStore, match_id: str) -> tuple[str, int]:
    """(state, attempts) of a match: from Redis while it is hot, from the stack's archive once
    archived (Redis then forgets it); ("missing", 0) for neither."""
    from arena.archive import queries
    from arena.ladder.store import NotFound

    try:
        info = store.get_match(match_id)
        return info.state, info.attempts
    except NotFound:
        archived = queries.get_match(_archive(stack.database_url), match_id)
        return ("finished", archived.attempts) if archived else ("missing", 0)


@cache
def _archive(url: str) -> Engine:
    from arena.archive.db import connect

    return connect(url)


def register_connected(stack: Any, name: str, version: str = "1") -> tuple[str, str]:
    """Register a connected agent through the stack's matchmaker: (agent id, token). The one place
    ladder tests register agents, so a host credential is added here once registration needs it
    (sent when the stack's environment sets OHELL_HOST_TOKEN)."""
    import grpc

    from arena.proto.ohell.v1 import matchmaker_pb2, matchmaker_pb2_grpc
    from arena.rpc.auth import auth_metadata

    host_token = stack.env().get("OHELL_HOST_TOKEN")
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        reply = matchmaker_pb2_grpc.MatchmakerServiceStub(channel).RegisterAgent(
            matchmaker_pb2.RegisterAgentRequest(name=name, kind=matchmaker_pb2.AGENT_KIND_CONNECTED, version=version),
            metadata=auth_metadata(host_token) if host_token else None,
        )
    return reply.agent.agent_id, reply.token
