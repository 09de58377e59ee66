"""An agent's page once the ladder it last played on is deleted (its matches stay), on real
processes: redis-server, the matchmaker (no workers: the matches are played here, through the
store), the web app. The page chose that ladder to show the agent's standing on, and answered 404
("no ladder"): every agent of a deleted ladder lost its page."""

from __future__ import annotations

import os
import urllib.request

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder import jobs, loop
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack, StackConfig

from ..ladder.helpers import builtin_ladder
from .conftest import HOST_TOKEN, start_web

pytestmark = pytest.mark.slow  # a stack and the web app as processes


def play(store: RedisStore, ladder: str) -> None:
    """Form the ladder's tables once and play every match formed, here."""
    for match_id in loop.form_once(store, store.get_ladder(ladder), None):
        jobs.run_match(store, match_id, store.catch_up_ratings, lease_s=5)


def test_an_agents_page_after_the_ladder_it_last_played_on_was_deleted(shared_redis_server: EmbeddedRedis) -> None:
    prefix = f"gone{os.getpid()}:"
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=prefix,
        builtin_workers=0,
        remote_worker=False,
        engine=False,
        host_token=HOST_TOKEN,
    )
    stack = Stack(config).start()
    client = redis.Redis.from_url(shared_redis_server.url)
    web = None
    try:
        store = RedisStore(client, Keys(prefix))
        # paused: the stack's forming loop leaves them alone (form_once here does not look)
        agents = builtin_ladder(store, "gone", bots=("random",) * 3, seats=3, paused=True)
        builtin_ladder(store, "kept", bots=("random",) * 2, seats=3, paused=True)
        store.join("kept", agents[0], None, enroll=True)  # the third seat of the one table
        play(store, "kept")
        play(store, "gone")  # its last match
        store.delete_ladder("gone")
        web, url = start_web(stack, stack.log_dir / "web.log")
        with urllib.request.urlopen(f"{url}/agents/{agents[0]}", timeout=30) as reply:
            page = reply.read().decode()
        assert 'href="/ladders/kept"' in page and 'id="standing"' in page  # on a ladder that is
    finally:
        if web is not None:
            web.terminate()
            web.wait(10)
        client.close()
        stack.cleanup(graceful=False)
