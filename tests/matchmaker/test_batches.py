"""Batches of built-in matches on a real redis-server: started together, each finished, logged and
rated once with its own record; a batch cut short loses none; a match that raises goes on alone."""

from __future__ import annotations

import json
import time

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.ladder import jobs, loop, redis_matches
from arena.ladder.leases import runner_id
from arena.ladder.matchlog import read_log
from arena.ladder.matchplay import play_builtin
from arena.ladder.ratings import replay, stored_ratings
from arena.ladder.redis_matches import Finished
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import MAX_BATCH, batch_size, batches, carried_batch, make_celery, matches_sender
from arena.play.specs import SeatSpec
from ohell.errors import RulesError

from ..ladder.helpers import builtin_ladder, wait_until


class Crash(BaseException):
    """Stands for the process dying: nothing in the job catches it."""


def form(store: RedisStore, ladder: str, tables: int) -> list[str]:
    """Form ``tables`` tables of the ladder (one forming round), dispatched as one batch."""
    sent: list[tuple[list[str], str]] = []
    formed = loop.form_once(store, store.get_ladder(ladder), lambda ids, queue: sent.append((list(ids), queue)))
    assert len(formed) == tables
    assert sent == [(formed, store.queues.builtin)]  # all built-in: one batch
    return formed


def logged(store: RedisStore, ladder: str) -> list[str]:
    return [summary["match_id"] for _, summary in read_log(store.client, store.keys, ladder)]


def assert_each_once(store: RedisStore, ladder: str, match_ids: list[str]) -> None:
    """Every match finished with its own record, logged once, and the ratings are the log's."""
    ids = logged(store, ladder)
    assert sorted(ids) == sorted(match_ids) and len(set(ids)) == len(ids)
    for match_id in match_ids:
        info = store.get_match(match_id)
        record = store.get_record(match_id)
        assert info.state == "finished" and record["match_id"] == match_id and record["seed"] == info.seed
        ladder_rules = store.get_ladder(ladder).rules()
        assert record == play_builtin(match_id, ladder_rules, info.seats, info.seed)  # its own deal and seats
    ratings, _ = replay(summary for _, summary in read_log(store.client, store.keys, ladder))
    assert stored_ratings(store.client, store.keys, ladder) == ratings
    assert not store.ratings_behind(ladder)


def test_batches_are_even_and_bounded() -> None:
    ids = [f"l-{n}" for n in range(1, 13)]
    assert batches(ids, 8) == [ids[:6], ids[6:]]
    assert batches(ids[:10], 4) == [ids[:4], ids[4:7], ids[7:10]]
    assert batches(ids, 5) == [ids[:4], ids[4:8], ids[8:]]
    assert batches(ids, 1) == [[match_id] for match_id in ids]
    assert batches(ids[:3], 8) == [ids[:3]]
    assert batches([], 8) == []
    for size in range(1, 14):
        cut = batches(ids, size)
        assert [m for chunk in cut for m in chunk] == ids and max(map(len, cut)) <= size
        assert max(map(len, cut)) - min(map(len, cut)) <= 1


def test_batch_size_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OHELL_MATCH_BATCH", "4")
    assert batch_size() == 4 and batch_size("1") == 1 and batch_size(str(MAX_BATCH)) == MAX_BATCH
    for bad in ("0", "-1", str(MAX_BATCH + 1), "many", "2.5"):
        with pytest.raises(ValueError, match="OHELL_MATCH_BATCH"):
            batch_size(bad)
    # the size a run_matches task carries (the matchmaker's); without one, the worker's batch_size()
    assert carried_batch(2) == 2 and carried_batch(MAX_BATCH) == MAX_BATCH and carried_batch(None) == 4
    for wrong in (0, MAX_BATCH + 1, True, "2", 2.0):
        with pytest.raises(ValueError, match="batch must be a whole number"):
            carried_batch(wrong)


def test_start_matches_leases_each_and_reports_each(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 12)
    first, second, third = form(store, "b", 3)
    assert store.start_match(third, "someone-else", 5) == "run"
    store.finish_match(first, play_builtin(first, store.get_ladder("b").rules(), store.get_match(first).seats, 1))
    started = store.start_matches([first, second, third, "b-99"], "me", 5)
    assert [status for status, _ in started] == ["finished", "run", "busy", "missing"]
    info = started[1][1]
    assert info is not None and info.match_id == second and info.state == "running" and info.attempts == 1
    assert store.client.get(store.keys.match_lease(second)) == b"me"
    store.release_match(second, "not-me")  # only the holder gives a lease up
    assert store.start_match(second, "other", 5) == "busy"
    store.release_match(second, "me")
    assert store.start_match(second, "other", 5) == "run"


def test_finish_matches_logs_each_once_in_one_call(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 12)
    ids = form(store, "b", 3)
    rules = store.get_ladder("b").rules()
    started = dict(zip(ids, store.start_matches(ids, "me", 5), strict=True))
    done = []
    for match_id, (_, info) in started.items():
        assert info is not None
        done.append(Finished(info, play_builtin(match_id, rules, info.seats, info.seed), started_ms=1234 + len(done)))
    outcomes = store.finish_matches(done)
    assert [outcome for outcome, _ in outcomes] == ["first"] * 3
    assert [log_id for _, log_id in outcomes] == [entry_id for entry_id, _ in read_log(store.client, store.keys, "b")]
    assert [store.get_match(m).started_ms for m in ids] == [1234, 1235, 1236]
    again = store.finish_matches(done[1:])  # a batch stored twice (its runner died before the ack)
    assert again == [("duplicate", log_id) for _, log_id in outcomes[1:]]
    assert logged(store, "b") == ids
    assert not store.active_matches() and all(store.busy_match(a) == "" for a in store.get_match(ids[0]).seats)


def test_a_batch_finishes_each_match_once_and_a_rerun_does_nothing(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("heuristic", "random") * 8)
    ids = form(store, "b", 4)
    rated: list[str] = []
    archived: list[int] = []

    def rate(ladder: str) -> None:
        rated.append(ladder)
        store.catch_up_ratings(ladder)

    run = jobs.run_matches(store, ids, rate, lease_s=5, archive=lambda: archived.append(1), flush_s=60.0)
    assert run.outcomes == dict.fromkeys(ids, "finished") and not run.errors
    assert rated == ["b"] and archived == [1]  # one flush: one rating catch-up, one archive request
    assert_each_once(store, "b", ids)
    assert [store.get_match(m).attempts for m in ids] == [1] * 4
    assert store.queued("b") == 16  # every enrolled agent back in the queue
    again = jobs.run_matches(store, ids, rate, lease_s=5)
    assert again.outcomes == dict.fromkeys(ids, "finished") and logged(store, "b") == ids


def test_a_batch_cut_short_loses_no_match(store: RedisStore) -> None:
    """The runner dies after storing two matches (each stored at once: flush_s=0): a redelivered
    batch skips those, finds the rest held until the dead runner's leases lapse, then plays them."""
    builtin_ladder(store, "b", bots=("heuristic", "random") * 8)
    ids = form(store, "b", 4)
    flushes: list[str] = []

    def rate_then_die(ladder: str) -> None:
        store.catch_up_ratings(ladder)
        flushes.append(ladder)
        if len(flushes) == 2:
            raise Crash

    with pytest.raises(Crash):
        jobs.run_matches(store, ids, rate_then_die, lease_s=0.5, flush_s=0.0)
    assert logged(store, "b") == ids[:2]
    assert all(store.lease_alive(m) for m in ids[2:])  # leased with the batch, though never played
    redelivered = jobs.run_matches(store, ids, store.catch_up_ratings, lease_s=0.5)
    assert redelivered.outcomes == dict.fromkeys(ids[:2], "finished") | dict.fromkeys(ids[2:], "busy")
    wait_until(lambda: not any(store.lease_alive(m) for m in ids[2:]), 10, "the dead runner's leases to lapse")
    retried = jobs.run_matches(store, ids[2:], store.catch_up_ratings, lease_s=5)
    assert retried.outcomes == dict.fromkeys(ids[2:], "finished")
    assert_each_once(store, "b", ids)
    assert [store.get_match(m).attempts for m in ids] == [1, 1, 2, 2]


def test_a_match_that_raises_is_given_up_by_the_batch_and_the_rest_finish(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 12)
    ids = form(store, "b", 3)
    seats = json.loads(store.client.hget(store.keys.match(ids[1]), "seats"))
    store.client.hset(store.keys.match(ids[1]), "seats", json.dumps(seats * 2))  # 8 seats: its play raises
    run = jobs.run_matches(store, ids, store.catch_up_ratings, lease_s=5)
    assert run.outcomes == {ids[0]: "finished", ids[1]: "error", ids[2]: "finished"}
    error = run.errors[ids[1]]
    assert (
        isinstance(error, RulesError)
        and "num_players=8 must be from 3 to 7" in str(error)
        and set(run.errors) == {ids[1]}
    )
    assert logged(store, "b") == [ids[0], ids[2]]
    assert not store.lease_alive(ids[1]) and store.get_match(ids[1]).state == "running"
    with pytest.raises(
        RulesError, match="num_players=8 must be from 3 to 7"
    ):  # the single run raises what the play raised
        jobs.run_match(store, ids[1], store.catch_up_ratings, lease_s=5)
    assert store.start_match(ids[1], runner_id(), 5) == "run"  # given up again: free to run


def test_a_finish_that_requeues_agents_wakes_the_forming_loop_once(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 8)
    ids = form(store, "b", 2)
    assert not store.wait_for_requeue(0.01)  # nothing finished yet: the wait runs to its timeout
    jobs.run_matches(store, ids, store.catch_up_ratings, lease_s=5, flush_s=0.0)  # two finish scripts
    assert store.client.llen(store.keys.forming_wake) == 1  # one wake-up however many finished
    assert store.wait_for_requeue(5.0)  # True: the wake-up waiting was taken (a wait run out is False)
    assert store.client.llen(store.keys.forming_wake) == 0 and not store.wait_for_requeue(0.01)


def test_a_batch_of_long_games_gives_back_the_matches_it_has_not_begun(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 12, think_ms=2)  # paced: ~60 ms a game
    ids = form(store, "b", 3)
    run = jobs.run_matches(store, ids, store.catch_up_ratings, lease_s=5, hand_back_s=0.01)
    assert run.outcomes == {ids[0]: "finished", ids[1]: "deferred", ids[2]: "deferred"}
    assert logged(store, "b") == ids[:1]
    assert not any(store.lease_alive(m) for m in ids[1:])  # free for another worker at once
    again = jobs.run_matches(store, ids[1:], store.catch_up_ratings, lease_s=5)  # as the task sends them
    assert again.outcomes == dict.fromkeys(ids[1:], "finished")
    assert_each_once(store, "b", ids)


def test_a_batch_goes_on_with_the_tables_of_the_agents_it_freed(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("heuristic", "random") * 8)
    first = form(store, "b", 4)
    sent: list[tuple[list[str], str]] = []

    def form_next(ladders: set[str]) -> list[str]:
        assert ladders == {"b"}
        return jobs.form_next(store, ladders, 4, lambda ids, queue: sent.append((list(ids), queue)))

    run = jobs.run_matches(store, first, store.catch_up_ratings, lease_s=5, form_next=form_next, continue_s=0.2)
    ids = list(run.outcomes)
    assert ids[:4] == first and len(ids) >= 8 and len(ids) % 4 == 0  # whole batches of the 16 freed agents
    assert run.outcomes == dict.fromkeys(ids, "finished") and not run.errors and not sent
    assert_each_once(store, "b", ids)
    assert [store.get_match(m).attempts for m in ids] == [1] * len(ids)
    assert store.queued("b") == 16 and not store.active_matches()
    assert store.client.llen(store.keys.forming_wake) == 1  # only the last batch's store woke the loop


def test_a_batch_forms_no_next_tables_on_a_paused_ladder_or_a_full_archive_backlog(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    builtin_ladder(store, "b", bots=("random",) * 8)
    first = form(store, "b", 2)
    jobs.run_matches(store, first, store.catch_up_ratings, lease_s=5)
    monkeypatch.setenv("OHELL_ARCHIVE_BACKLOG_MAX", "2")  # the two finished matches wait for the archive
    assert jobs.form_next(store, {"b"}, 4, lambda ids, queue: None) == []
    monkeypatch.setenv("OHELL_ARCHIVE_BACKLOG_MAX", "100")
    store.set_paused("b", True)
    assert jobs.form_next(store, {"b"}, 4, lambda ids, queue: None) == []
    assert jobs.form_next(store, {"other"}, 4, lambda ids, queue: None) == []
    store.set_paused("b", False)
    assert len(jobs.form_next(store, {"b"}, 4, lambda ids, queue: None)) == 2


def test_a_batch_does_not_jump_ahead_of_tasks_waiting_for_the_workers(store: RedisStore) -> None:
    builtin_ladder(store, "b", bots=("random",) * 8)
    jobs.run_matches(store, form(store, "b", 2), store.catch_up_ratings, lease_s=5)
    store.client.rpush(store.queues.builtin, "a task of another batch")
    sent: list[tuple[list[str], str]] = []
    kept = jobs.form_next(store, {"b"}, 4, lambda ids, queue: sent.append((list(ids), queue)))
    assert kept == [] and len(sent) == 1 and len(sent[0][0]) == 2  # formed all the same, and sent behind it
    assert sent[0][1] == store.queues.builtin


def test_a_match_with_remote_seats_is_voided_not_played_again(
    store: RedisStore, redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner that died mid-match (a worker killed, a deploy) had shown the agents their hands and
    the cards played; played again with the same seed, they would know the deal, others' cards
    included. All-built-in matches are played again (no agent learns anything); these are voided."""
    monkeypatch.setenv("REDIS_URL", redis_server.url)  # where the match host relays
    builtin_ladder(store, "v", bots=("random",) * 8)
    first, again = form(store, "v", 2)
    for match_id in (first, again):
        seats = json.loads(store.client.hget(store.keys.match(match_id), "seats"))
        seats[0] = SeatSpec.connected(f"a-{match_id}").to_dict()  # an agent (not connected here)
        store.client.hset(store.keys.match(match_id), "seats", json.dumps(seats))
    assert jobs.run_match(store, first, store.catch_up_ratings, lease_s=5) == "finished"  # a first attempt plays
    assert store.start_match(again, "a-runner-that-dies", 0.05) == "run"
    wait_until(lambda: not store.lease_alive(again), 10, "its lease to lapse")  # the sweep sends the match again
    assert jobs.run_match(store, again, store.catch_up_ratings, lease_s=5) == "voided"
    info = store.get_match(again)
    assert info.state == "failed" and info.error.startswith("voided:") and "seen" in info.error
    assert logged(store, "v") == [first]


def test_the_sweep_sends_a_match_whose_runner_died_once_per_runner(store: RedisStore) -> None:
    """A match whose runner died is sent again at once, but only once until another runner starts it
    (or it waited ``redispatch_after_s`` since): it was sent again at every sweep (2 s) for as long
    as its task waited behind others, and each copy then retried every lease period ('busy') while
    the match was played."""
    builtin_ladder(store, "o", bots=("random",) * 4)
    (match_id,) = form(store, "o", 1)
    sent: list[str] = []
    policy = loop.SweepPolicy(redispatch_after_s=30)

    def sweep() -> int:
        return loop.sweep(store, lambda ids, queue: sent.extend(ids), lambda ladder: None, policy)

    assert store.start_match(match_id, "gone:1:x", 30) == "run"
    store.client.delete(store.keys.match_lease(match_id))  # its runner died: the lease lapsed
    assert [sweep() for _ in range(3)] == [1, 0, 0]
    assert store.start_match(match_id, "gone:2:y", 30) == "run"  # the copy started, and died
    store.client.delete(store.keys.match_lease(match_id))
    assert [sweep() for _ in range(2)] == [1, 0]
    policy = loop.SweepPolicy(redispatch_after_s=0)
    assert sweep() == 1 and sent == [match_id] * 3  # that copy was lost too: sent after the wait


@pytest.mark.slow
def test_a_match_no_worker_starts_is_sent_again_less_and_less_often(
    store: RedisStore, redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queue no worker takes from (the remote worker down) got a copy of every queued match each
    ``redispatch_after_s`` (120 an hour, 2,880 a day per match, every one kept by the broker until a
    worker came back, then started only to find the match finished or busy). Now each copy waits
    twice as long as the one before, up to 64 times ``redispatch_after_s``; a runner that starts the
    match begins the count again, and a match whose runner died is still sent again at once. Real
    Celery sends to the test's Redis, with no worker, and the sweep on a clock of its own."""
    clock = [time.time() * 1000]
    monkeypatch.setattr(loop, "now_ms", lambda: int(clock[0]))
    monkeypatch.setattr(redis_matches, "now_ms", lambda: int(clock[0]))
    builtin_ladder(store, "w", bots=("random",) * 4)
    dispatch = matches_sender(make_celery(redis_server.url), batch=6)
    (match_id,) = loop.form_once(store, store.get_ladder("w"), dispatch)
    policy = loop.SweepPolicy(redispatch_after_s=30)

    def copies_within(seconds: int) -> list[int]:
        """Sweep every 10 s for ``seconds``: when each copy was sent (s after the first step's start)."""
        sent = []
        for step in range(1, seconds // 10 + 1):
            clock[0] += 10_000
            if loop.sweep(store, dispatch, lambda ladder: None, policy):
                sent.append(step * 10)
        return sent

    assert copies_within(3 * 3600) == [30, 90, 210, 450, 930, 1890, 3810, 5730, 7650, 9570]
    assert store.client.llen(store.queues.builtin) == 11  # the first send and 10 copies, where 361 were
    assert store.start_match(match_id, "gone:1:x", 30) == "run"  # a copy started, and died
    store.client.delete(store.keys.match_lease(match_id))
    assert loop.sweep(store, dispatch, lambda ladder: None, policy) == 1  # at once: its runner is gone
    assert copies_within(300) == [30, 90, 210]  # the count began again
