"""OpenSkill ratings of a ladder, applied from its match log exactly once and in log order.

``catch_up`` reads the log entries after the ladder's cursor (``rated:{ladder}``) with the ratings
and statistics of their agents (one script), rates them, and writes the result with a second
script that first checks that the cursor and every rating and statistic it was computed from are
still what was read (compare and set): ratings, statistics, leaderboard, the cursor and each
match's rating before/after (``rating-changes:{ladder}``, for the archive) move together, so a match
is rated exactly once, and two workers rating matches of the same agent at the same time cannot
lose an update (the loser's write changes nothing and it reads again). Applying in log order makes
``rebuild`` reproduce the stored ratings bit for bit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import redis
from openskill.models import PlackettLuce

from arena.keys import Keys, text

# tau keeps sigma from collapsing on a long ladder, so ratings still follow an agent that improves.
# It must be given to the model: rate(..., tau=0) is silently ignored by openskill.
MODEL = PlackettLuce(tau=25.0 / 300.0)
STAT_FIELDS = ("games", "hands", "exact", "faults", "forfeits", "win_shares", "points")  # stats:{l} agent -> JSON list
WIN_SHARE = 420  # a win shared by k seats (k <= 7) counts 420 / k: statistics stay integers

Rating = tuple[float, float]  # (mu, sigma)


def ranks(totals: Sequence[int], forfeited: Iterable[int] = ()) -> list[float]:
    """1-based places (lower is better): by total points, ties share a place, forfeits last.
    Whole numbers, typed as openskill's ``rate(ranks=...)`` takes them."""
    out = set(forfeited)
    standing = [total for seat, total in enumerate(totals) if seat not in out]
    last = len(standing) + 1
    return [last if seat in out else 1 + sum(other > total for other in standing) for seat, total in enumerate(totals)]


def rate_match(ratings: dict[str, Any], summary: dict[str, Any]) -> list[tuple[float, float, float, float]]:
    """Update ``ratings`` (agent -> openskill rating) in place with one match; agents missing
    from it start at the model's default. Returns each seat's (mu, sigma) before and after."""
    agents = summary["agents"]
    teams = [[ratings.get(agent) or MODEL.rating()] for agent in agents]
    new = MODEL.rate(teams, ranks=ranks(summary["totals"], summary["forfeited"]))
    changes = []
    for agent, (before,), (rating,) in zip(agents, teams, new, strict=True):
        ratings[agent] = rating
        changes.append((before.mu, before.sigma, rating.mu, rating.sigma))
    return changes


def add_stats(stats: dict[str, list[int]], summary: dict[str, Any]) -> None:
    """Add one match to ``stats`` (agent -> counts in STAT_FIELDS order)."""
    winners, forfeited, totals = summary["winners"], summary["forfeited"], summary["totals"]
    hands, exact, faults = summary["hands"], summary["exact"], summary["faults"]
    share = WIN_SHARE // len(winners) if winners else 0
    for seat, agent in enumerate(summary["agents"]):
        counts = stats.get(agent)
        if counts is None:
            counts = stats[agent] = [0] * len(STAT_FIELDS)
        counts[0] += 1
        counts[1] += hands[seat]
        counts[2] += exact[seat]
        counts[3] += faults[seat]
        counts[4] += seat in forfeited
        counts[5] += share if seat in winners else 0
        counts[6] += totals[seat]


def catch_up(client: redis.Redis, keys: Keys, ladder: str, batch: int = 1000) -> int:
    """Apply the log entries not rated yet; returns how many this call applied. An entry logged
    after this call read the log is rated by its own finisher's call (or the sweep)."""
    applied = 0
    while True:
        done = _apply_batch(client, keys, ladder, batch)
        if done is None:
            continue  # another worker moved the cursor first: re-read
        applied += done
        if done < batch:  # the log ended inside this batch: no need for another read to see it empty
            return applied


# What one rating batch reads, in one round trip: KEYS = rated cursor, log, ratings, stats;
# ARGV = batch size. Returns {} when the log holds nothing after the cursor, else {the cursor
# (false: none yet), entry ids, summaries, agents (first seen order), their ratings, their stats}
# (false where none yet).
# Agent ids are matched in the summary's compact JSON (cheaper than cjson.decode of it all).
READ_PENDING = """
local cursor = redis.call('GET', KEYS[1])
local entries = redis.call('XRANGE', KEYS[2], '(' .. (cursor or '0-0'), '+', 'COUNT', ARGV[1])
if #entries == 0 then return {} end
local ids, summaries, agents, ratings, stats, seen = {}, {}, {}, {}, {}, {}
for i, entry in ipairs(entries) do
  ids[i] = entry[1]
  local fields = entry[2]
  for j = 1, #fields, 2 do
    if fields[j] == 'summary' then summaries[i] = fields[j + 1] end
  end
  for agent in string.gmatch(string.match(summaries[i], '"agents":%s*%[(.-)%]'), '"([^"]*)"') do
    if not seen[agent] then
      seen[agent] = true
      agents[#agents + 1] = agent
      ratings[#agents] = redis.call('HGET', KEYS[3], agent)
      stats[#agents] = redis.call('HGET', KEYS[4], agent)
    end
  end
end
return {cursor, ids, summaries, agents, ratings, stats}
"""
READ_PENDING_SHA = hashlib.sha1(READ_PENDING.encode()).hexdigest()


# Write one rating batch if nothing it was computed from moved meanwhile (another rater, a
# rebuild): KEYS = rated cursor, ratings, stats, board, rating changes; ARGV = the cursor as read
# ('' for none), the new cursor, the number of agents n, then six per agent: id, rating and stats
# as read ('' for none), new rating, new stats, leaderboard score; then (match, change) pairs for
# the archive. Returns 1 when written, 0 (nothing written) when the caller must read again.
WRITE_RATED = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
local last = 3 + 6 * tonumber(ARGV[3])
for i = 4, last, 6 do
  if (redis.call('HGET', KEYS[2], ARGV[i]) or '') ~= ARGV[i + 1] then return 0 end
  if (redis.call('HGET', KEYS[3], ARGV[i]) or '') ~= ARGV[i + 2] then return 0 end
end
for i = 4, last, 6 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 3])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 4])
  redis.call('ZADD', KEYS[4], ARGV[i + 5], ARGV[i])
end
for i = last + 1, #ARGV, 2 do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""
WRITE_RATED_SHA = hashlib.sha1(WRITE_RATED.encode()).hexdigest()


def _script(client: redis.Redis, script: str, sha: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
    try:
        return client.evalsha(sha, len(keys), *keys, *args)
    except redis.exceptions.NoScriptError:  # a fresh (or flushed) server: load it once
        client.script_load(script)
        return client.evalsha(sha, len(keys), *keys, *args)


def _apply_batch(client: redis.Redis, keys: Keys, ladder: str, batch: int) -> int | None:
    """Read the cursor and what follows it (one script), rate, write all if nothing moved (one
    script); None when something moved (nothing written: read again)."""
    read_keys = (keys.rated(ladder), keys.log(ladder), keys.ratings(ladder), keys.stats(ladder))
    pending = list(_script(client, READ_PENDING, READ_PENDING_SHA, read_keys, [batch]))
    if not pending:
        return 0
    cursor, ids, raw_summaries, raw_agents, stored, counted = pending
    summaries = [json.loads(raw) for raw in raw_summaries]
    agents = [text(agent) for agent in raw_agents]
    ratings = {agent: _rating(raw) for agent, raw in zip(agents, stored, strict=True) if raw}
    stats = {agent: json.loads(raw) for agent, raw in zip(agents, counted, strict=True) if raw}
    changes: list[str] = []
    for summary in summaries:
        seats = rate_match(ratings, summary)
        changes += (summary["match_id"], "[" + ", ".join(f"[{b!r}, {s!r}, {a!r}, {t!r}]" for b, s, a, t in seats) + "]")
        add_stats(stats, summary)
    args: list[Any] = [text(cursor or b""), text(ids[-1]), len(agents)]
    for agent, old_rating, old_stats in zip(agents, stored, counted, strict=True):
        rating = ratings[agent]
        args += (agent, old_rating or "", old_stats or "", _rating_text(rating), json.dumps(stats[agent]))
        args.append(repr(rating.mu - 3 * rating.sigma))
    write_keys = (keys.rated(ladder), keys.ratings(ladder), keys.stats(ladder), keys.board(ladder))
    written = _script(client, WRITE_RATED, WRITE_RATED_SHA, (*write_keys, keys.rating_changes(ladder)), args + changes)
    return len(ids) if written else None


def _rating(raw: bytes | str) -> Any:
    mu, sigma = json.loads(raw)
    return MODEL.rating(mu=mu, sigma=sigma)


def _rating_text(rating: Any) -> str:
    """ "[mu, sigma]" exactly as json.dumps writes floats (repr), without its overhead."""
    return f"[{rating.mu!r}, {rating.sigma!r}]"


def _write(pipe: Any, keys: Keys, ladder: str, ratings: dict[str, Any], stats: dict[str, list[int]]) -> None:
    if ratings:
        pipe.hset(keys.ratings(ladder), mapping={agent: _rating_text(r) for agent, r in ratings.items()})
        pipe.zadd(keys.board(ladder), {agent: r.mu - 3 * r.sigma for agent, r in ratings.items()})
    if stats:
        pipe.hset(keys.stats(ladder), mapping={agent: json.dumps(counts) for agent, counts in stats.items()})


def replay(summaries: Iterable[dict[str, Any]]) -> tuple[dict[str, Rating], dict[str, list[int]]]:
    """Ratings (agent -> (mu, sigma)) and statistics (agent -> counts in STAT_FIELDS order)
    from scratch, from summaries in log order (pure)."""
    ratings: dict[str, Any] = {}
    stats: dict[str, list[int]] = {}
    for summary in summaries:
        rate_match(ratings, summary)
        add_stats(stats, summary)
    return {agent: (r.mu, r.sigma) for agent, r in ratings.items()}, stats


REBUILD_TRIES = 5


class RatedMeanwhile(Exception):
    """Each replay of a ladder's ratings found a match rated since it began (its ladder runs): nothing written."""


def rebuild(
    client: redis.Redis,
    keys: Keys,
    ladder: str,
    archived: Iterable[tuple[str, dict[str, Any]]] = (),
    tries: int = REBUILD_TRIES,
) -> int:
    """Recompute the ladder's ratings, statistics and leaderboard from its log, and from ``archived``
    ((log id, summary) of archived matches: after a Redis loss the archive holds what the log lost);
    a match in both counts once. Returns matches replayed. A match rated meanwhile starts the replay
    again, ``tries`` times at most, then RatedMeanwhile: on a busy ladder whose replay took longer than
    the time between two matches it began again for ever, saying nothing."""
    from arena.ladder.matchlog import read_log

    extra = list(archived)
    for _ in range(tries):
        with client.pipeline() as pipe:
            try:
                pipe.watch(keys.rated(ladder))
                by_match = {summary["match_id"]: (log_id, summary) for log_id, summary in extra}
                by_match |= {summary["match_id"]: (log_id, summary) for log_id, summary in read_log(pipe, keys, ladder)}
                entries = sorted(by_match.values(), key=lambda entry: _stream_position(entry[0]))
                ratings: dict[str, Any] = {}
                stats: dict[str, list[int]] = {}
                for _, summary in entries:
                    rate_match(ratings, summary)
                    add_stats(stats, summary)
                pipe.multi()
                pipe.delete(keys.ratings(ladder), keys.stats(ladder), keys.board(ladder), keys.rated(ladder))
                _write(pipe, keys, ladder, ratings, stats)
                if entries:
                    pipe.set(keys.rated(ladder), entries[-1][0])
                pipe.execute()
                return len(entries)
            except redis.WatchError:
                continue
    raise RatedMeanwhile(ladder)


def _stream_position(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def stored_ratings(client: redis.Redis, keys: Keys, ladder: str) -> dict[str, Rating]:
    raw = client.hgetall(keys.ratings(ladder))
    return {text(agent): tuple(json.loads(value)) for agent, value in raw.items()}
