"""Lua scripts of the Redis store (Redis 6.2). Each runs atomically. Key names come from the
functions ``K.<name>(prefix, ...)`` that ``arena.keys.Keys.lua`` puts in front of each script, with
the prefix given as ARGV[1] (one Redis instance, not a cluster: see docs/operations.md)."""

from __future__ import annotations

# Tickets of one ladder that can be seated now: [agent, enqueued_ms, rating JSON|false, stats JSON|false]*.
# ARGV = prefix, ladder, now_ms, grace_ms. Tickets whose lease expired are dropped here. A
# connected agent's ticket (value "g:<joined ms>") needs the agent's gateway presence key: without
# it the agent is not seated, and after grace_ms its ticket is dropped (its connection died).
# Agents busy at another table are skipped.
SNAPSHOT = """
local p, l, now, grace = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local queue = K.queue(p, l)
local members = redis.call('ZRANGE', queue, 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #members, 2 do
  local agent = members[i]
  local ticket = redis.call('GET', K.ticket(p, l, agent))
  local seatable = ticket ~= false
  if seatable and string.sub(ticket, 1, 2) == 'g:'
      and redis.call('EXISTS', K.agent_presence(p, agent)) == 0 then
    seatable = false
    if now - tonumber(string.sub(ticket, 3)) < grace then ticket = 'wait' else ticket = false end
  end
  if ticket == false then
    redis.call('DEL', K.ticket(p, l, agent))
    redis.call('ZREM', queue, agent)
  elseif seatable and redis.call('EXISTS', K.busy(p, agent)) == 0 then
    out[#out + 1] = agent
    out[#out + 1] = members[i + 1]
    out[#out + 1] = redis.call('HGET', K.ratings(p, l), agent)
    out[#out + 1] = redis.call('HGET', K.stats(p, l), agent)
  end
end
return out
"""

# Claim tables: ARGV = prefix, ladder, now_ms, celery queue, rules JSON, think_ms,
# JSON [{agents, seats, queue, seed}, ...] (seed: the match's secret deal seed, a decimal string
# drawn by the caller from a CSPRNG). The rules and think_ms are the ladder's as the tables were
# formed: each match keeps them, so a later update of the ladder changes no claimed match.
# A table is formed only if each of its queued agents still holds a ticket and sits nowhere
# else; then their tickets go, they are marked busy, remote agents are told their seat and the
# match is created. No table is formed on a ladder deleted since the caller read its definition
# (DELETE_LADDER and this script are atomic: a ladder is never deleted with a match in play).
# Returns one match id (or false) per table.
CLAIM = """
local p, l, now, celery_queue, rules, think_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local tables = cjson.decode(ARGV[7])
local exists = redis.call('EXISTS', K.ladder(p, l)) == 1
local out = {}
for i, table_ in ipairs(tables) do
  local ok = exists
  for _, agent in ipairs(table_.agents) do
    if redis.call('EXISTS', K.ticket(p, l, agent)) == 0
        or redis.call('EXISTS', K.busy(p, agent)) == 1 then
      ok = false
      break
    end
  end
  if ok then
    local match_id = l .. '-' .. redis.call('INCR', K.match_seq(p))
    for _, agent in ipairs(table_.agents) do
      redis.call('ZREM', K.queue(p, l), agent)
      redis.call('DEL', K.ticket(p, l, agent))
      redis.call('SET', K.busy(p, agent), match_id)
    end
    for seat, spec in ipairs(table_.seats) do  -- tell remote agents where they sit (WatchQueue)
      if spec.kind ~= 'builtin' then
        redis.call('XADD', K.seated(p, spec.agent_id), 'MAXLEN', '~', 100, '*', 'match', match_id,
          'seat', seat - 1)
      end
    end
    redis.call('HSET', K.match(p, match_id), 'match_id', match_id, 'ladder', l, 'state', 'queued',
      'seats', cjson.encode(table_.seats), 'queue', celery_queue, 'created_ms', now,
      'dispatched_ms', now, 'attempts', 0, 'seed', table_.seed, 'rules', rules, 'think_ms', think_ms)
    redis.call('SADD', K.active(p), match_id)
    out[i] = match_id
  else
    out[i] = false
  end
end
return out
"""

# Raise the match counter to at least ARGV[2] ("set if greater"): ARGV = prefix, number. Returns the
# counter as it is then. The archive's highest match number goes here, so a counter Redis lost (or
# set back) never hands out an id the archive holds.
RAISE_MATCH_SEQ = """
local key, floor = K.match_seq(ARGV[1]), tonumber(ARGV[2])
local current = tonumber(redis.call('GET', key) or '0')
if floor > current then
  redis.call('SET', key, ARGV[2])
  return floor
end
return current
"""

# A ladder made host-only: ARGV = prefix, ladder. The tickets (and enrolment) of its self-registered
# agents go: a ticket lives up to JoinQueue's longest lease (an hour), and the forming loop seated
# it on the ladder that no longer admits it. Returns how many went.
DROP_SELF_REGISTERED = """
local p, l = ARGV[1], ARGV[2]
local dropped = 0
for _, agent in ipairs(redis.call('ZRANGE', K.queue(p, l), 0, -1)) do
  if redis.call('HGET', K.agent(p, agent), 'self_registered') == '1' then
    redis.call('DEL', K.ticket(p, l, agent))
    redis.call('ZREM', K.queue(p, l), agent)
    redis.call('SREM', K.enrolled(p, l), agent)
    dropped = dropped + 1
  end
end
return dropped
"""

# Delete a ladder unless one of its matches is in play: ARGV = prefix, ladder. Its definition,
# queue, tickets, enrolment and house bots go; its log, records and ratings stay. Returns -1 when
# there is no such ladder, else the number of its matches in play (0: deleted).
DELETE_LADDER = """
local p, l = ARGV[1], ARGV[2]
if redis.call('EXISTS', K.ladder(p, l)) == 0 then return -1 end
local playing = 0
for _, id in ipairs(redis.call('SMEMBERS', K.active(p))) do
  if string.match(id, '^(.*)%-[^-]*$') == l then playing = playing + 1 end
end
if playing > 0 then return playing end
for _, agent in ipairs(redis.call('ZRANGE', K.queue(p, l), 0, -1)) do
  redis.call('DEL', K.ticket(p, l, agent))
end
redis.call('SREM', K.ladders(p), l)
redis.call('DEL', K.ladder(p, l), K.queue(p, l), K.enrolled(p, l), K.house(p, l))
return 0
"""

# Join: ARGV = prefix, ladder, agent, now_ms, lease_ms (0 = no expiry), enroll (1 = put back
# in the queue after every match), ticket value ("g:<ms>" ties it to the gateway connection),
# self-registered ('1': only on an open ladder).
# Joining again renews the lease and keeps the place. An agent whose token was revoked (token_sha
# emptied) gets no ticket: returns false; nor does one on a ladder deleted since the caller read it
# (a ticket left there would queue the agent on the next ladder of that name): returns -1; nor a
# self-registered one on a ladder made host-only since (UpdateLadder then drops the tickets of
# self-registered agents: one written after that would stay): returns -2.
JOIN = """
local p, l, agent = ARGV[1], ARGV[2], ARGV[3]
local definition = redis.call('GET', K.ladder(p, l))
if not definition then return -1 end
if ARGV[8] == '1' and cjson.decode(definition).entry ~= 'open' then return -2 end
if redis.call('HGET', K.agent(p, agent), 'token_sha') == '' then return false end
local ticket = K.ticket(p, l, agent)
if tonumber(ARGV[5]) > 0 then
  redis.call('SET', ticket, ARGV[7], 'PX', ARGV[5])
else
  redis.call('SET', ticket, ARGV[7])
end
redis.call('ZADD', K.queue(p, l), 'NX', ARGV[4], agent)
if ARGV[6] == '1' then redis.call('SADD', K.enrolled(p, l), agent) end
return redis.call('ZSCORE', K.queue(p, l), agent)
"""

# Start (or resume) running matches, claimed together by one runner: ARGV = prefix, runner,
# lease_ms, now_ms, match ids. Returns, per match, {status} or {'run', HGETALL of the match} (the
# runner needs its seats: no second round trip). Every match started here is leased at once, so
# a batch whose runner dies lapses as a whole and the sweep sends each of its matches again.
START = """
local p, runner, lease_ms, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out = {}
for i = 5, #ARGV do
  local id = ARGV[i]
  local match = K.match(p, id)
  local state = redis.call('HGET', match, 'state')
  local lease = K.match_lease(p, id)
  local holder = state and redis.call('GET', lease)
  if not state then
    out[#out + 1] = {'missing'}
  elseif state == 'finished' or state == 'failed' then
    out[#out + 1] = {state}
  elseif holder and holder ~= runner then
    out[#out + 1] = {'busy'}
  else
    redis.call('SET', lease, runner, 'PX', lease_ms)
    redis.call('HSET', match, 'state', 'running', 'started_ms', now, 'runner', runner)
    redis.call('HINCRBY', match, 'attempts', 1)
    out[#out + 1] = {'run', redis.call('HGETALL', match)}
  end
end
return out
"""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

# Shared by FINISH and FAIL: free the seated agents and put enrolled built-ins back in the queue
# (and then, when ``wake``, wake the forming loop: one entry in forming-wake at most).
_RELEASE = """
local function release(p, l, id, now, wake)
  redis.call('SREM', K.active(p), id)
  redis.call('DEL', K.match_lease(p, id))
  local requeued = false
  for _, seat in ipairs(cjson.decode(redis.call('HGET', K.match(p, id), 'seats'))) do
    local agent = seat.agent_id
    if not seat.house then
      if redis.call('GET', K.busy(p, agent)) == id then redis.call('DEL', K.busy(p, agent)) end
      if redis.call('SISMEMBER', K.enrolled(p, l), agent) == 1 then
        redis.call('SET', K.ticket(p, l, agent), now)
        redis.call('ZADD', K.queue(p, l), 'NX', now, agent)
        requeued = true
      end
    end
  end
  if wake and requeued and redis.call('LLEN', K.forming_wake(p)) == 0 then redis.call('RPUSH', K.forming_wake(p), l) end
end
"""

# Finish matches: ARGV = prefix, now_ms, wake ('1': wake the forming loop when agents go back in a
# queue; '0': the caller forms their next tables itself), then five per match: id, record (zlib of its JSON),
# summary JSON, record JSON length, started_ms ('' keeps the one START wrote). The first finish
# of a match appends its summary to the ladder's log, stores the record and marks the match for
# the archive; any later one changes nothing. Returns {outcome, log id} per match, outcome
# 'first', 'duplicate' (log id of the first), 'failed' or 'missing'.
FINISH = (
    _RELEASE
    + """
local p, now, wake = ARGV[1], ARGV[2], ARGV[3] == '1'
local out = {}
for i = 4, #ARGV, 5 do
  local id, record, summary, size, started = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local match = K.match(p, id)
  local state = redis.call('HGET', match, 'state')
  if not state then
    out[#out + 1] = {'missing', ''}
  elseif state == 'finished' then
    out[#out + 1] = {'duplicate', redis.call('HGET', match, 'log_id')}
  elseif state == 'failed' then
    out[#out + 1] = {'failed', ''}
  else
    local l = redis.call('HGET', match, 'ladder')
    local log_id = redis.call('XADD', K.log(p, l), '*', 'match', id, 'summary', summary)
    redis.call('SET', K.record(p, id), record)
    redis.call('ZADD', K.unarchived(p), now, id)
    redis.call('HSET', match, 'state', 'finished', 'finished_ms', now, 'log_id', log_id, 'summary', summary,
      'record_bytes', size)
    if started ~= '' then redis.call('HSET', match, 'started_ms', started) end
    release(p, l, id, now, wake)
    out[#out + 1] = {'first', log_id}
  end
end
return out
"""
)

# Fail: ARGV = prefix, match, error, now_ms. The match is given up (not logged, not rated).
FAIL = (
    _RELEASE
    + """
local p, id, now = ARGV[1], ARGV[2], ARGV[4]
local match = K.match(p, id)
local state = redis.call('HGET', match, 'state')
if not state or state == 'finished' or state == 'failed' then return 0 end
redis.call('HSET', match, 'state', 'failed', 'finished_ms', now, 'error', ARGV[3])
release(p, redis.call('HGET', match, 'ladder'), id, now, true)
return 1
"""
)

# Forget archived matches: ARGV = prefix, match ids ("<ladder>-<n>"). Their record, hash and
# rating change go, and they leave the archive's backlog; only the log entry (the ratings' source)
# stays. Safe to repeat.
FORGET = """
local p = ARGV[1]
for i = 2, #ARGV do
  local id = ARGV[i]
  redis.call('DEL', K.record(p, id), K.match(p, id))
  redis.call('HDEL', K.rating_changes(p, string.match(id, '^(.*)%-[^-]*$')), id)
  redis.call('ZREM', K.unarchived(p), id)
end
return #ARGV - 1
"""

# What a forming round needs first, in one round trip: ARGV = prefix. Returns {the archive's
# backlog, each ladder's definition (by name; false if deleted meanwhile), each ladder's queued
# tickets}.
ROUND = """
local p = ARGV[1]
local names = redis.call('SMEMBERS', K.ladders(p))
table.sort(names)
local defs, queued = {}, {}
for i, name in ipairs(names) do
  defs[i] = redis.call('GET', K.ladder(p, name)) or false
  queued[i] = redis.call('ZCARD', K.queue(p, name))
end
return {redis.call('ZCARD', K.unarchived(p)), defs, queued}
"""

# Take the archive lock, or keep it: ARGV = prefix, key name ("archive_lock"/"archive_retry"),
# holder, ttl_ms. Returns 1 when the caller holds it now.
HOLD = """
local key = K[ARGV[2]](ARGV[1])
local holder = redis.call('GET', key)
if holder and holder ~= ARGV[3] then return 0 end
redis.call('SET', key, ARGV[3], 'PX', ARGV[4])
return 1
"""

RELEASE_IF_HELD = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Take an agent's name: ARGV = prefix, name, its skeleton (arena.ladder.model.name_skeleton), agent id.
# Returns false when the name was free (both hashes now hold it), else the id of the agent holding it
# or a name that differs from it only in letter case or look-alike letters ('Strong-1' beside
# 'strong-1', 'aIice' beside 'alice' would pass for it on a leaderboard). The names taken before the
# skeleton index existed are put in it on the first call (the marker field '#indexed': no name
# starts with '#'), folded here as name_skeleton folds them.
NAME = """
local p, name, skeleton, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local names, index = K.agent_names(p), K.agent_names_alike(p)
if redis.call('HEXISTS', index, '#indexed') == 0 then
  local all = redis.call('HGETALL', names)
  for i = 1, #all, 2 do
    local folded = string.lower(all[i])
    folded = string.gsub(folded, 'rn', 'm')
    folded = string.gsub(folded, 'vv', 'w')
    folded = string.gsub(folded, '0', 'o')
    folded = string.gsub(folded, '[1i]', 'l')
    redis.call('HSETNX', index, folded, all[i + 1])
  end
  redis.call('HSET', index, '#indexed', '1')
end
local taken = redis.call('HGET', names, name) or redis.call('HGET', index, skeleton)
if taken then return taken end
redis.call('HSET', names, name, id)
redis.call('HSET', index, skeleton, id)
return false
"""
