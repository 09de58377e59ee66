"""The Redis store on a real redis-server: agents, tickets, atomic claims, the match lifecycle."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
import redis.connection

from arena.archive import queries
from arena.archive.db import connect, sqlite_url
from arena.clock import now_ms
from arena.ladder import archiving, jobs, loop
from arena.ladder.model import Ladder, name_skeleton
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import (
    AlreadyExists,
    InUse,
    LimitReached,
    NotFound,
    PermissionDenied,
    StoreError,
    Unauthenticated,
)
from ohell.bots import BOT_FACTORIES
from ohell.record import RECORD_FORMAT

from ..ladder.helpers import builtin_ladder


def agents(store: RedisStore, count: int, kind: str = "builtin", prefix: str = "a") -> list[str]:
    ids = []
    for i in range(count):
        bot = "random" if kind == "builtin" else ""
        ids.append(store.register_agent(f"{prefix}{i}", kind, bot=bot)[0].agent_id)
    return ids


def fake_record(match_id: str, seats: int) -> dict[str, object]:
    return {
        "format": RECORD_FORMAT,
        "match_id": match_id,
        "hands": [],
        "totals": list(range(seats)),
        "winners": [seats - 1],
        "faults": [],
        "forfeited": [],
    }


def count_round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter (its one item) of the commands and pipelines sent to Redis from now on."""
    sent = [0]
    original = redis.connection.Connection.send_packed_command

    def counted(self: redis.connection.Connection, *args: object, **kwargs: object) -> None:
        sent[0] += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counted)
    return sent


@pytest.mark.parametrize(
    "version",
    [
        "\x1b]0;pwned\x07\x1b[2J",  # terminal escapes: the host's `ohell agent list` printed them raw
        "v1\u202eevil",  # a bidi override
        "line\nbreak",
        '=HYPERLINK("http://x","1")',  # a formula once the host opens the export's results.csv
        "+1",
        "-1",
        "@sum(1)",
    ],
)
def test_a_version_an_agent_sets_is_plain_text(store: RedisStore, version: str) -> None:
    """An agent sets its version itself; it goes to the host's terminal and the ladder export's CSV."""
    agent, _ = store.register_agent("vera", "connected")
    with pytest.raises(StoreError, match="version"):
        store.set_version(agent.agent_id, version)
    with pytest.raises(StoreError, match="version"):
        store.register_agent("vera2", "connected", version=version)
    assert store.set_version(agent.agent_id, "2.1.0+build 7 (tuned)").version == "2.1.0+build 7 (tuned)"


def test_register_and_authenticate(store: RedisStore) -> None:
    agent, token = store.register_agent("alice", "connected", version="1.0")
    assert store.authenticate(agent.agent_id, token) == agent
    assert store.agent_for_token(token) == agent
    assert store.agent_for_token("nope") is None
    with pytest.raises(Unauthenticated):
        store.authenticate(agent.agent_id, "wrong")
    with pytest.raises(AlreadyExists, match="alice"):
        store.register_agent("alice", "connected")
    assert store.set_version(agent.agent_id, "2.0").version == "2.0"


def test_names_are_unique_whatever_their_letter_case(store: RedisStore) -> None:
    """'Strong-1' beside 'strong-1' passed for it on a leaderboard (a self-registered agent too)."""
    strong, _ = store.register_agent("strong-1", "builtin", bot="strong")
    with pytest.raises(AlreadyExists, match="an agent named 'strong-1' exists \\('Strong-1': names are unique"):
        store.register_agent("Strong-1", "connected", self_registered=True)
    assert store.agent_names([strong.agent_id]) == {strong.agent_id: "strong-1"}
    assert store.register_agent("strong-2", "connected")[0].name == "strong-2"


def test_self_registrations_are_capped_in_all_and_a_refused_one_takes_no_place(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each caller's rate limit (5, then 1 a minute) bounds no botnet, nor the 65,536 /64s of one
    IPv6 /48: anonymous callers registered agents without end (Redis, the host's agent list)."""
    monkeypatch.setattr(store, "max_self_registered", 3)
    store.register_agent("first", "connected", self_registered=True)
    with pytest.raises(AlreadyExists):  # a name taken uses no place under the cap
        store.register_agent("First", "connected", self_registered=True)
    with pytest.raises(StoreError):  # nor does a malformed name (refused before counting)
        store.register_agent("bad name", "connected", self_registered=True)
    store.register_agent("second", "connected", self_registered=True)
    store.register_agent("third", "connected", self_registered=True)
    for name in ("fourth", "fifth"):
        with pytest.raises(LimitReached, match="3 agents have registered themselves already"):
            store.register_agent(name, "connected", self_registered=True)
    assert store.register_agent("byhost", "connected")[0].name == "byhost"  # the host's are not counted
    assert [agent.name for agent in store.list_agents(0, 10)[0]] == ["first", "second", "third", "byhost"]


LOOK_ALIKES = [("alice", "aIice"), ("alicia", "a1icia"), ("Bill", "BiII"), ("bob0", "BOBO"), ("modern", "rnodern")]
LOOK_ALIKES += [("wendy", "vvendy")]


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKES)
def test_a_name_that_reads_as_another_is_taken(store: RedisStore, first: str, second: str) -> None:
    """Names are ASCII, but 'aIice' (a capital I) passed for 'alice' on a leaderboard, in the web
    app's sans-serif: any anonymous caller could take a name that reads as a host's agent's."""
    held = store.register_agent(first, "connected")[0]
    with pytest.raises(AlreadyExists, match=f"an agent named '{first}' exists .*look-alike letters"):
        store.register_agent(second, "connected", self_registered=True)
    assert store.agent_names([held.agent_id]) == {held.agent_id: first}


def test_names_taken_before_the_look_alike_index_are_folded_alike_in_redis(store: RedisStore) -> None:
    """The names of a store written before the index are folded by the NAME script (Lua), as
    ``name_skeleton`` folds a new one: the two must agree."""
    for number, (first, _) in enumerate(LOOK_ALIKES):
        store.client.hset(store.keys.agent_names, first, f"a{900 + number}")  # as an older store holds them
    for number, (_, second) in enumerate(LOOK_ALIKES):
        holder = store._name(args=[store.keys.prefix, second, name_skeleton(second), "a999"])
        assert holder is not None and holder.decode() == f"a{900 + number}", second
    assert store.register_agent("carol", "connected")[0].name == "carol"


def test_names_taken_before_the_case_index_are_indexed_on_the_next_registration(store: RedisStore) -> None:
    older, _ = store.register_agent("Alice", "connected")
    store.client.delete(store.keys.agent_names_alike)  # as a store written before the index was
    with pytest.raises(AlreadyExists, match="an agent named 'Alice' exists"):
        store.register_agent("alice", "connected")
    assert store.register_agent("bob", "connected")[0].name == "bob"
    assert store.client.hget(store.keys.agent_names_alike, name_skeleton("alice")) == older.agent_id.encode()


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("bad name!", "connected"), "name"),
        (("x", "robot"), "kind"),
        (("x", "builtin", "", "nobot"), "bot"),
        (("x", "endpoint", "", "", "no-port"), "endpoint"),
        (("x", "endpoint", "", "", "127.0.0.1:99999"), "endpoint"),  # no such port: every dial would fail
        (("x", "endpoint", "", "", "127.0.0.1:0"), "endpoint"),
    ],
)
def test_bad_registrations_name_the_field(store: RedisStore, args: tuple[str, ...], field: str) -> None:
    with pytest.raises(StoreError) as error:
        store.register_agent(*args)
    assert error.value.field == field


@pytest.mark.parametrize("name", ["-lead", ".hidden", "al ice", "élise", "x" * 65, "house-mine", ""])
def test_a_bad_agent_name_is_refused_with_the_whole_rule(store: RedisStore, name: str) -> None:
    """The refusal said "1-64 letters, digits, '_', '.', '-'": '-lead' and 'élise' fit that and were
    refused all the same (the first must be a letter or digit; ASCII only), and 'house-mine' got
    another message that did not say the rest."""
    with pytest.raises(StoreError) as refused:
        store.register_agent(name, "connected")
    rule = (
        "must be 1-64 characters of ASCII letters, digits, '_', '.' and '-', the first a letter or digit, "
        "not starting 'house-' (kept for the ladders' house bots)"
    )
    assert str(refused.value) == f"name {name[:80]!r} {rule}" and refused.value.field == "name"


def test_an_unknown_built_in_bot_is_refused_with_the_names_of_those_there_are(store: RedisStore) -> None:
    """A ladder's unknown house bot was refused as "house bot 'strnog' is not a built-in bot", naming
    none of the bots the host could have meant (an agent's unknown bot already listed them)."""
    known = ", ".join(sorted(BOT_FACTORIES))
    with pytest.raises(StoreError) as refused:
        store.create_ladder(Ladder("x", house_bots=("random", "strnog")))
    assert str(refused.value) == f"house_bots: 'strnog' is not a built-in bot (built-in bots: {known})"
    assert refused.value.field == "house_bots"
    with pytest.raises(StoreError) as refused:
        store.register_agent("alice", "builtin", bot="strnog")
    assert str(refused.value) == f"bot 'strnog' is not a built-in bot (built-in bots: {known})"


@pytest.mark.parametrize("kind", ["connected", "endpoint"])
def test_a_bot_for_an_agent_that_plays_its_own_is_refused(store: RedisStore, kind: str) -> None:
    """The host page's register form and ``ohell agent register --kind connected --bot random`` took the
    bot and dropped it without a word: the host thought the agent would play it."""
    endpoint = "127.0.0.1:7000" if kind == "endpoint" else ""
    with pytest.raises(StoreError) as refused:
        store.register_agent("alice", kind, bot="random", endpoint=endpoint)
    assert str(refused.value) == f"bot 'random' is for builtin agents only: a {kind} agent plays its own bot"
    assert refused.value.field == "bot" and store.list_agents(0, 10) == ([], False)
    assert store.register_agent("alice", kind, endpoint=endpoint)[0].name == "alice"


@pytest.mark.parametrize("name", ["_class", ".class", "Class", "class-2", "c" * 65])
def test_a_bad_ladder_name_is_refused_with_the_whole_rule(store: RedisStore, name: str) -> None:
    """The refusal said "1-64 of a-z 0-9 '_' '.'": '_class' and '.class' fit that and were refused all
    the same (the first must be a letter or digit), and it did not say why '-' is out."""
    with pytest.raises(StoreError) as refused:
        store.create_ladder(Ladder(name))
    rule = "1-64 characters of a-z, 0-9, '_' and '.', the first a letter or digit (no '-': match ids are <ladder>-<n>)"
    assert str(refused.value) == f"name={name[:80]!r} must be {rule}" and refused.value.field == "name"


def test_ladder_validation(store: RedisStore) -> None:
    with pytest.raises(StoreError, match="seats=8"):
        store.create_ladder(Ladder("x", seats=8))
    with pytest.raises(StoreError, match="hand_sizes"):
        store.create_ladder(Ladder("x", overrides={"hand_sizes": [99]}))
    with pytest.raises(StoreError, match="^house_bots: .nobot. is not a built-in bot"):
        store.create_ladder(Ladder("x", house_bots=("nobot",)))
    store.create_ladder(Ladder("x", house_bots=("random",), house_fill=True))
    assert len(store.house_bots("x")) == 3  # seats - 1 of each house bot
    with pytest.raises(AlreadyExists):
        store.create_ladder(Ladder("x"))
    with pytest.raises(NotFound):
        store.get_ladder("nope")


def test_one_ticket_per_agent_and_renewal_keeps_the_place(store: RedisStore) -> None:
    store.create_ladder(Ladder("l"))
    (a,) = agents(store, 1, "connected")
    first = store.join("l", a, 5.0)
    while now_ms() <= first:  # the clock moves on: a renewal that queued anew would return a later time
        time.sleep(0.001)
    assert store.join("l", a, 5.0) == first
    assert store.queued("l") == 1


def test_ticket_expires_when_its_lease_is_not_renewed(store: RedisStore) -> None:
    store.create_ladder(Ladder("l"))
    ids = [store.register_agent(f"e{i}", "endpoint", endpoint=f"127.0.0.1:{7000 + i}")[0].agent_id for i in range(4)]
    for agent in ids:
        store.join("l", agent, 0.2)
    time.sleep(0.3)
    assert store.snapshot("l", now_ms()) == []
    assert store.queued("l") == 0


def test_connected_ticket_needs_the_gateway_connection(store: RedisStore) -> None:
    store.create_ladder(Ladder("l"))
    (a,) = agents(store, 1, "connected")
    store.join("l", a, 30.0)
    assert store.snapshot("l", now_ms()) == []  # no gateway stream: not seatable, kept for the grace
    assert store.queued("l") == 1
    store.client.set(f"ohell:agent:{a}:gateway", "gw1", ex=30)  # the gateway's presence key
    assert [t.agent_id for t in store.snapshot("l", now_ms())] == [a]
    store.client.delete(f"ohell:agent:{a}:gateway")  # the connection died
    assert store.snapshot("l", now_ms() + 11_000) == []
    assert store.queued("l") == 0  # dropped after the grace


def test_no_match_is_claimed_on_a_ladder_deleted_after_its_tables_were_formed(store: RedisStore) -> None:
    """Joins that found the ladder just before the host deleted it left tickets on no ladder (the
    join's check and its script are two steps); the forming loop, which read the definition before
    the delete too, claimed a table of them: a match played, rated and stored on a deleted ladder.
    The join's script and the claim each refuse a deleted ladder now."""
    builtin_ladder(store, "l", bots=(), seats=3)
    _, [(formed_by, _)] = store.forming_state()  # the forming loop reads the definition ...
    joining = RedisStore(store.client)  # ... three joins check that the ladder is there ...

    def read_before_the_delete(name: str) -> Ladder:
        if store.client.exists(store.keys.ladder(name)):
            store.delete_ladder(name)  # ... the host deletes it (nothing in play) ...
        return formed_by

    joining.get_ladder = read_before_the_delete  # type: ignore[method-assign]
    for agent_id in agents(store, 3):
        with pytest.raises(NotFound):  # ... and their scripts find it gone (they wrote the tickets)
            joining.join("l", agent_id, None)
    assert loop.form_once(store, formed_by, None) == []  # the loop's claim forms nothing
    assert store.active_matches() == []


def test_a_join_that_raced_the_delete_leaves_no_ticket_for_a_ladder_of_the_same_name(store: RedisStore) -> None:
    """A self-registered agent's join checked an open ladder, the host deleted it, and the join's
    script wrote the ticket all the same: the host's next ladder of that name, for the agents it
    registered alone, seated the agent (or enrolled a built-in for good) though it never joined it."""
    store.create_ladder(Ladder("l", entry="open", overrides={"hand_sizes": [3, 2]}))
    stranger = store.register_agent("stranger", "connected", self_registered=True)[0].agent_id
    open_ladder = store.get_ladder("l")
    joining = RedisStore(store.client)

    def read_before_the_delete(name: str) -> Ladder:
        store.delete_ladder(name)  # between the join's check and its script
        return open_ladder

    joining.get_ladder = read_before_the_delete  # type: ignore[method-assign]
    with pytest.raises(NotFound):
        joining.join("l", stranger, 60.0)
    store.create_ladder(Ladder("l", overrides={"hand_sizes": [3, 2]}))  # host-only, as ladders are by default
    assert not store.has_ticket("l", stranger) and store.queued("l") == 0


def test_a_ladder_made_host_only_drops_the_tickets_of_self_registered_agents(store: RedisStore) -> None:
    """A self-registered agent queued (JoinQueue's lease is up to an hour) on an open ladder the host
    then made host-only stayed queued, and the forming loop seated it on the ladder that no longer
    admits it; so did one whose join had read the ladder as open just before the change."""
    store.create_ladder(Ladder("l", entry="open", overrides={"hand_sizes": [3, 2]}))
    stranger = store.register_agent("stranger", "connected", self_registered=True)[0].agent_id
    late = store.register_agent("late", "connected", self_registered=True)[0].agent_id
    invited = store.register_agent("invited", "connected")[0].agent_id
    for agent_id in (stranger, invited):
        store.join("l", agent_id, 3600.0)
    open_ladder = store.get_ladder("l")
    joining = RedisStore(store.client)

    def read_before_the_change(name: str) -> Ladder:
        store.update_ladder(replace(open_ladder, entry="host"))  # between the join's check and its script
        return open_ladder

    joining.get_ladder = read_before_the_change  # type: ignore[method-assign]
    with pytest.raises(PermissionDenied, match="admits only agents the host registered"):
        joining.join("l", late, 3600.0)
    assert not store.has_ticket("l", stranger) and not store.has_ticket("l", late)
    assert store.has_ticket("l", invited) and store.queued("l") == 1


def test_a_match_claimed_while_its_ladder_is_deleted_keeps_the_ladder(store: RedisStore) -> None:
    """The forming loop of another matchmaker claims a table while DeleteLadder runs: either the
    claim comes first (the delete is refused: a match is in play) or the delete does (nothing is
    claimed). The check and the delete were two steps, and a claim between them left a match in
    play on a deleted ladder."""
    builtin_ladder(store, "l", bots=("random",) * 3, seats=3)
    _, [(formed_by, _)] = store.forming_state()
    other = RedisStore(store.client)  # another matchmaker's store, on the same Redis
    seen = store.active_matches

    def claim_meanwhile() -> list[str]:  # the delete's look at the matches in play, if it takes one
        found = seen()
        loop.form_once(other, formed_by, None)
        return found

    store.active_matches = claim_meanwhile  # type: ignore[method-assign]
    try:
        store.delete_ladder("l")
    except InUse:
        assert store.get_ladder("l").name == "l" and len(other.active_matches()) == 1
    else:
        loop.form_once(other, formed_by, None)  # the claim after the delete, when it never looked
        assert other.active_matches() == [], "a match in play on a deleted ladder"


def test_a_match_plays_with_the_seats_and_rules_it_was_claimed_with(store: RedisStore, tmp_path: Path) -> None:
    """A match read its ladder's rules when it was played, so an UpdateLadder just after the forming
    loop read the definition (UpdateLadder's refusal while a match was in play had nothing to see
    yet) gave a table formed for 3 seats the new rules, or RulesError and half a minute of retries.
    Each claim keeps its rules now: the update applies to the tables formed after it."""
    builtin_ladder(store, "l", bots=("random",) * 4, seats=3, overrides={"hand_sizes": [3, 2, 1]})
    _, [(formed_by, _)] = store.forming_state()  # the forming loop reads the definition ...
    changed = Ladder("l", seats=4, overrides={"hand_sizes": [2, 1]})
    assert store.update_ladder(changed).seats == 4  # ... the host updates it (nothing in play) ...
    (match_id,) = loop.form_once(store, formed_by, None)  # ... and the loop claims a table by what it read
    assert store.update_ladder(replace(changed, overrides={"hand_sizes": [1]})).seats == 4  # and once it is claimed
    assert jobs.run_match(store, match_id, store.catch_up_ratings, lease_s=5) == "finished"
    record = store.get_record(match_id)
    assert len(record["seats"]) == 3 and record["rules"]["hand_sizes"] == [3, 2, 1]
    archive = connect(sqlite_url(tmp_path))
    try:
        assert archiving.archive_pending(store, archive).archived == 1
        archived = queries.get_match(archive, match_id)
        assert archived is not None and archived.rules["hand_sizes"] == [3, 2, 1]  # not the ladder's now
    finally:
        archive.dispose()
    (next_match,) = loop.form_once(store, store.get_ladder("l"), None)  # the agents are back: a table of 4
    assert len(store.get_match(next_match).seats) == 4
    assert jobs.run_match(store, next_match, store.catch_up_ratings, lease_s=5) == "finished"
    assert store.get_record(next_match)["rules"]["hand_sizes"] == [1]


def test_a_match_claimed_before_its_rules_were_kept_with_it_is_voided_if_its_ladder_no_longer_seats_it(
    store: RedisStore,
) -> None:
    """Such a match (claimed by an older matchmaker) takes its ladder's rules, as before; when the
    ladder's seats changed since, it fails at once as the platform's fault (voided: not rated, its
    agents free), where it raised RulesError at every retry."""
    ids = builtin_ladder(store, "l", bots=("random",) * 3, seats=3, overrides={"hand_sizes": [2, 1]})
    (match_id,) = store.claim("l", [ids], now_ms())
    assert match_id is not None
    store.client.hdel(store.keys.match(match_id), "rules", "think_ms")  # as an older claim left it
    store.update_ladder(Ladder("l", seats=4, overrides={"hand_sizes": [2, 1]}))
    jobs._LADDERS.clear()
    assert jobs.run_match(store, match_id, store.catch_up_ratings, lease_s=5) == "voided"
    assert store.get_match(match_id).error == "voided: its ladder has 4 seats now, its table 3"
    assert not any(store.busy_match(agent) for agent in ids)


def test_leaving_while_the_table_forms_is_safe(store: RedisStore) -> None:
    store.create_ladder(Ladder("l", seats=3))
    ids = agents(store, 4)
    for agent in ids:
        store.join("l", agent, None)
    snapshot = store.snapshot("l", now_ms())  # the former has read the queue ...
    assert len(snapshot) == 4
    store.leave("l", ids[1])  # ... the agent leaves ...
    assert store.claim("l", [ids[:3]], now_ms()) == [None]  # ... so this table is not formed
    assert not store.busy_match(ids[0]) and not store.busy_match(ids[1])
    assert sorted(t.agent_id for t in store.snapshot("l", now_ms())) == sorted([ids[0], ids[2], ids[3]])
    (match_id,) = store.claim("l", [[ids[0], ids[2], ids[3]]], now_ms())
    assert match_id and store.queued("l") == 0
    assert store.get_match(match_id).state == "queued"


def test_no_agent_at_two_tables(store: RedisStore) -> None:
    store.create_ladder(Ladder("l1", seats=3))
    store.create_ladder(Ladder("l2", seats=3))
    ids = agents(store, 5)
    for agent in ids:
        store.join("l1", agent, None)
        store.join("l2", agent, None)
    first = store.claim("l1", [ids[:3]], now_ms())
    second = store.claim("l2", [[ids[2], ids[3], ids[4]]], now_ms())  # ids[2] already plays on l1
    assert first[0] and second == [None]
    assert sorted(t.agent_id for t in store.snapshot("l2", now_ms())) == sorted(ids[3:])  # busy ones wait


def test_finish_is_idempotent_and_enrolled_agents_requeue(store: RedisStore) -> None:
    store.create_ladder(Ladder("l", seats=3))
    ids = agents(store, 3)
    for agent in ids:
        store.join("l", agent, None, enroll=True)
    (match_id,) = store.claim("l", [ids], now_ms())
    assert store.start_match(match_id, "r1", 5) == "run"
    assert store.start_match(match_id, "r2", 5) == "busy"
    assert store.finish_match(match_id, fake_record(match_id, 3))[0] is True
    assert store.finish_match(match_id, fake_record(match_id, 3))[0] is False
    assert store.start_match(match_id, "r3", 5) == "finished"
    assert store.client.xlen(store.keys.log("l")) == 1
    assert store.queued("l") == 3 and not any(store.busy_match(a) for a in ids)
    assert store.get_record(match_id)["match_id"] == match_id
    assert [m.match_id for m in store.list_matches("l", "", 0, 10)] == [match_id]
    assert [m.match_id for m in store.list_matches("", ids[0], 0, 10)] == [match_id]


def test_match_ids_count_on_one_number_for_every_ladder_and_are_never_given_twice(store: RedisStore) -> None:
    """docs/operations.md: a match id is <ladder>-<n>, n from one counter of all ladders (a new ladder's
    first match was 'openl-48', where the docs seemed to promise 'openl-1'); a ladder created again
    under a deleted one's name goes on counting, so its ids are not those of the archived matches."""
    ids = agents(store, 3)
    claimed = []
    for name in ("one", "two", "one"):
        store.create_ladder(Ladder(name, seats=3))
        for agent in ids:
            store.join(name, agent, 30.0)
        claimed += store.claim(name, [ids], now_ms())
        assert store.fail_match(claimed[-1], "over")  # nothing in play: the ladder may be deleted
        if len(claimed) == 1:
            store.delete_ladder("one")
    assert claimed == ["one-1", "two-2", "one-3"]


def test_a_failed_match_frees_its_agents_and_is_not_logged(store: RedisStore) -> None:
    store.create_ladder(Ladder("l", seats=3))
    ids = agents(store, 3)
    for agent in ids:
        store.join("l", agent, 30.0)
    (match_id,) = store.claim("l", [ids], now_ms())
    assert store.fail_match(match_id, "boom")
    assert store.get_match(match_id).state == "failed"
    assert store.client.xlen(store.keys.log("l")) == 0
    assert not any(store.busy_match(a) for a in ids) and store.queued("l") == 0  # not enrolled
    assert store.finish_match(match_id, fake_record(match_id, 3))[0] is False


def test_house_bots_fill_a_lone_agents_table(store: RedisStore) -> None:
    from arena.ladder.loop import form_once

    ladder = store.create_ladder(Ladder("h", seats=3, house_bots=("heuristic",), house_fill=True, fill_after_s=0.0))
    (lone,) = agents(store, 1, "connected")
    store.join("h", lone, 30.0)
    store.client.set(f"ohell:agent:{lone}:gateway", "gw1")
    sent: list[tuple[list[str], str]] = []
    (match_id,) = form_once(store, ladder, lambda matches, queue: sent.append((list(matches), queue)))
    seats = store.get_match(match_id).seats
    assert sent == [([match_id], "ohell.remote")] and seats[0].agent_id == lone
    assert [seat.house for seat in seats] == [False, True, True]
    assert store.busy_match(lone) == match_id
    assert not any(store.busy_match(seat.agent_id) for seat in seats[1:])  # house bots sit anywhere


def test_running_matches_take_two_round_trips_whatever_their_number(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ListMatches(state="running") is public: reading each match in play one round trip at a time
    let any caller keep the matchmaker waiting on Redis in proportion to everything in play."""
    store.create_ladder(Ladder("l1", seats=3))
    store.create_ladder(Ladder("l2", seats=3))
    ids = agents(store, 30)
    for index, ladder in enumerate(("l1", "l2")):
        for agent in ids[index * 15 : (index + 1) * 15]:
            store.join(ladder, agent, None)
    tables = {
        ladder: [ids[i : i + 3] for i in range(start, start + 15, 3)] for ladder, start in (("l1", 0), ("l2", 15))
    }
    formed = {ladder: store.claim(ladder, tables[ladder], now_ms()) for ladder in tables}
    store.start_match(formed["l1"][0], "r1", 30)
    assert store.finish_match(formed["l2"][0], fake_record(formed["l2"][0], 3))[0]  # no longer in play
    sent = count_round_trips(monkeypatch)
    running = store.running_matches("", "")
    assert sent[0] <= 2
    assert [m.match_id for m in running] == sorted(m for m in formed["l1"] + formed["l2"][1:] if m)
    hashes_read = store.client.info("commandstats")["cmdstat_hgetall"]["calls"]
    assert [m.match_id for m in store.running_matches("l1", "")] == sorted(m for m in formed["l1"] if m)
    # a ladder's listing reads that ladder's matches only
    assert store.client.info("commandstats")["cmdstat_hgetall"]["calls"] - hashes_read == len(formed["l1"])
    assert [m.match_id for m in store.running_matches("", ids[3])] == [formed["l1"][1]]
    assert {m.state for m in running} == {"queued", "running"}


def test_house_bot_names_are_the_house_bots_own(store: RedisStore) -> None:
    """A ladder's house bots are found by name ("house-<bot>-<n>"): an agent registered under such a
    name (self-registered by anyone while a ladder is open) became a house bot of every ladder with
    that bot, and house fill then formed no table at all (it has no ticket to claim). The names are
    kept for the house, and a ladder never takes an agent that is not a house bot as one."""
    with pytest.raises(StoreError, match="house") as refused:
        store.register_agent("house-heuristic-1", "connected", self_registered=True)
    assert refused.value.field == "name"
    assert "not starting 'house-' (kept for the ladders' house bots)" in str(refused.value)  # README's example used one
    squatter, _ = store.register_agent("squatter", "connected")
    store.client.hset("ohell:agent-names", "house-heuristic-2", squatter.agent_id)  # one registered before the rule
    store.create_ladder(Ladder("h", seats=3, house_bots=("heuristic",), house_fill=True))
    house = [store.get_agent(bot.agent_id) for bot in store.house_bots("h")]
    assert [(agent.name, agent.house, agent.bot) for agent in house] == [
        ("house-heuristic-1", True, "heuristic"),
        ("house-heuristic-3", True, "heuristic"),  # its name passed over
    ]


def test_a_house_name_in_another_letter_case_is_kept_for_the_house_and_passed_over_when_held(
    store: RedisStore,
) -> None:
    """'House-heuristic-1' passed the house-name rule (it looked at 'house-' only), and with names unique
    whatever their case, every ladder with heuristic house bots was then refused ('an agent named
    'House-heuristic-1' exists'): anyone self-registering it while a ladder was open blocked them."""
    with pytest.raises(StoreError, match="house") as refused:
        store.register_agent("House-heuristic-1", "connected", self_registered=True)
    assert refused.value.field == "name"
    squatter, _ = store.register_agent("squatter", "connected")
    for key, name in (
        (store.keys.agent_names, "HOUSE-heuristic-1"),
        (store.keys.agent_names_alike, name_skeleton("house-heuristic-1")),
    ):
        store.client.hset(key, name, squatter.agent_id)  # one registered before the rule
    store.create_ladder(Ladder("h", seats=3, house_bots=("heuristic",), house_fill=True))
    house = [store.get_agent(bot.agent_id) for bot in store.house_bots("h")]
    assert [(agent.name, agent.house) for agent in house] == [("house-heuristic-2", True), ("house-heuristic-3", True)]


def test_the_docs_register_agents_under_names_the_store_takes(store: RedisStore) -> None:
    """README's host example registered 'house-1', a name kept for house bots: a host copying it got
    INVALID_ARGUMENT. Every name an ``ohell agent register`` line of the docs uses must register."""
    root = Path(__file__).resolve().parents[2]
    text = "\n".join(path.read_text() for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    names = set(re.findall(r"ohell agent register ([A-Za-z0-9_.-]+)", text)) - {"NAME"}
    assert names
    for name in sorted(names):
        store.register_agent(name, "connected")


def test_unarchived_matches_are_listed_a_batch_per_round_trip(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ListMatches is public and reads the finished matches the archive does not hold yet: one round
    trip per match (up to 1,000 while the archive fell behind) became one per batch."""
    from arena.ladder import redis_matches

    store.create_ladder(Ladder("l", seats=3))
    ids = agents(store, 4)
    finished = []
    for number in range(20):  # seats rotate over the four agents
        table = [ids[(number + k) % 4] for k in range(3)]
        for agent in table:
            store.join("l", agent, None)
        (match_id,) = store.claim("l", [table], now_ms())
        assert match_id and store.finish_match(match_id, fake_record(match_id, 3))[0]
        finished.append((match_id, table))
    newest_first = [match_id for match_id, _ in reversed(finished)]
    monkeypatch.setattr(redis_matches, "SCAN_BATCH", 7, raising=False)
    sent = count_round_trips(monkeypatch)
    assert [m.match_id for m in store.list_matches("", "", 0, 50)] == newest_first
    assert sent[0] <= 1 + 3  # the ids, then three batches of at most 7
    assert [m.match_id for m in store.list_matches("l", "", 5, 9)] == newest_first[5:14]  # across batches
    mine = [match_id for match_id, table in reversed(finished) if ids[0] in table]
    assert [m.match_id for m in store.list_matches("", ids[0], 2, 100)] == mine[2:]
    assert store.list_matches("other", "", 0, 10) == []


def test_the_store_says_which_agents_are_revoked_and_since_when(store: RedisStore) -> None:
    """The agent's hash keeps when its token was revoked (``revoked_ms``) until a rotation; an agent
    revoked before revision 11 (its token_sha emptied, no time) reads revoked, time unknown."""
    gone, kept, older = agents(store, 3, kind="connected")
    before = now_ms()
    store.set_token(gone, rotate=False)
    since = store.get_agent(gone).revoked_ms
    assert store.get_agent(gone).revoked and before <= since <= now_ms()
    store.set_token(gone, rotate=False)  # again: the first time stays
    assert [(a.revoked, a.revoked_ms) for a in store.list_agents(0, 10)[0]] == [(True, since), (False, 0), (False, 0)]
    store.client.hset(store.keys.agent(older), "token_sha", "")  # as a revocation before revision 11 left it
    assert (store.get_agent(older).revoked, store.get_agent(older).revoked_ms) == (True, 0)
    store.set_token(gone, rotate=True)
    assert (store.get_agent(gone).revoked, store.get_agent(gone).revoked_ms) == (False, 0)
    assert not store.get_agent(kept).revoked


def test_a_ladder_update_keeps_what_it_does_not_set_and_loses_no_change_made_meanwhile(store: RedisStore) -> None:
    """An update merges into the stored definition in one transaction: think_ms (no message carries
    it) and paused stay, and a pause that lands between its read and its write is kept (the update
    reads again), where a plain read-then-write wrote the definition it had read over it."""
    store.create_ladder(Ladder("l", overrides={"hand_sizes": [2, 1]}, think_ms=40))
    assert store.update_ladder(Ladder("l", seats=3)).think_ms == 40
    other = RedisStore(store.client, store.keys)
    reads: list[Ladder] = []

    def paused_meanwhile(stored: Ladder) -> Ladder:
        reads.append(stored)
        if len(reads) == 1:
            other.set_paused("l", True)  # another host's pause, after this update read the definition
        return replace(stored, seats=5)

    updated = store._rewrite("l", paused_meanwhile)
    assert len(reads) == 2 and (updated.seats, updated.paused, updated.think_ms) == (5, True, 40)
    assert store.get_ladder("l") == updated
