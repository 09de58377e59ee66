"""Lua scripts of the tournament store (the pattern of ``arena.ladder.scripts``: key functions
``K.<name>(prefix, ...)`` from ``arena.keys``, the prefix as ARGV[1]; each script runs atomically)."""

from __future__ import annotations

# Create: ARGV = prefix, id, spec JSON, now_ms, tables JSON {id: plan JSON}, the nonce of the deal sets
# sent beforehand (tourney-deals-new:{id}:{nonce}), summary JSON (the spec without its entrants, for lists).
# Refused (0, the deal sets sent dropped) when the id exists; else -1 when the deal sets sent are gone
# (their TTL ran out, evicted); else the tournament, its first round's tables and the deal sets, renamed
# into place.
CREATE = """
local p, t = ARGV[1], ARGV[2]
local staged = K.tourney_deals_new(p, t, ARGV[6])
if redis.call('SISMEMBER', K.tourneys(p), t) == 1 then
  redis.call('UNLINK', staged)
  return 0
end
if redis.call('EXISTS', staged) == 0 then return -1 end
redis.call('SADD', K.tourneys(p), t)
local tables = cjson.decode(ARGV[5])
local count = 0
for id, plan in pairs(tables) do
  redis.call('HSET', K.tourney_tables(p, t), id, plan)
  redis.call('HSET', K.tourney_table(p, t, id), 'state', 'queued', 'attempts', 0)
  count = count + 1
end
redis.call('RENAME', staged, K.tourney_deals(p, t))
redis.call('PERSIST', K.tourney_deals(p, t))
redis.call('HSET', K.tourney(p, t), 'spec', ARGV[3], 'summary', ARGV[7], 'state', 'running', 'round', 1,
  'tables', count, 'tables_done', 0, 'created_ms', ARGV[4])
return 1
"""

# Start (or resume) a table: ARGV = prefix, id, table, runner, lease_ms, now_ms.
# Returns {'run'} or {state}: 'missing', 'finished', 'cancelled', 'busy' (a live runner holds it).
START = """
local p, t, x, runner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local table_ = K.tourney_table(p, t, x)
local state = redis.call('HGET', table_, 'state')
if not state then return {'missing'} end
if state == 'finished' or state == 'cancelled' then return {state} end
local lease = K.tourney_lease(p, t, x)
local holder = redis.call('GET', lease)
if holder and holder ~= runner then return {'busy'} end
redis.call('SET', lease, runner, 'PX', ARGV[5])
redis.call('HSET', table_, 'state', 'running', 'runner', runner, 'started_ms', ARGV[6])
redis.call('HINCRBY', table_, 'attempts', 1)
return {'run'}
"""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

# Before each game of a table: ARGV = prefix, id, table, runner, lease_ms. 'cancelled' (the runner's
# lease released), 'run' (its lease renewed) or 'lost' (another runner holds the table now).
NEXT_GAME = """
local p, t, x, runner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local lease = K.tourney_lease(p, t, x)
local mine = redis.call('GET', lease) == runner
if redis.call('HGET', K.tourney_table(p, t, x), 'state') == 'cancelled' then
  if mine then redis.call('DEL', lease) end
  return 'cancelled'
end
if mine then
  redis.call('PEXPIRE', lease, ARGV[5])
  return 'run'
end
return 'lost'
"""

# Decide once which entrants forfeit a table: ARGV = prefix, id, table, forfeits JSON, away JSON
# {agent id: {mark: mark JSON, clears: its clear count at the look}} (connected entrants the wait
# waited for, not online when it ended), online JSON [agent ids] (connected entrants online). A
# resumed table keeps the first decision (returned). With that first decision, and only then, the
# tournament's away marks: set for the away ones whose clear count is still the one read at the look
# that saw them away (else a table saw them online since: the mark would be stale; an earlier mark, an
# earlier 'since', stays), cleared for the online ones, whose clear counts go up; a runner dying after
# it leaves all of it done.
FORFEITS = """
local p, t = ARGV[1], ARGV[2]
local table_ = K.tourney_table(p, t, ARGV[3])
if redis.call('HSETNX', table_, 'forfeits', ARGV[4]) == 1 then
  local away, clears = K.tourney_away(p, t), K.tourney_away_clears(p, t)
  for agent, seen in pairs(cjson.decode(ARGV[5])) do
    if tonumber(redis.call('HGET', clears, agent) or 0) == seen.clears then
      redis.call('HSETNX', away, agent, seen.mark)
    end
  end
  for _, agent in ipairs(cjson.decode(ARGV[6])) do
    redis.call('HDEL', away, agent)
    redis.call('HINCRBY', clears, agent, 1)
  end
end
redis.call('HDEL', table_, 'waiting')
return redis.call('HGET', table_, 'forfeits')
"""

# One game: ARGV = prefix, id, game, result JSON, record JSON. The first write wins (1), later ones
# change nothing (0): a game replayed after a crash is counted once. None is recorded once the
# tournament is cancelled (a game in play then is dropped: its standings are final). With ARGV[6]
# (the game's table) and ARGV[7] (how many times its deal sets were redealt when the runner read
# them), none is recorded from a runner whose deals were redealt since (REDEAL): a stalled runner
# would record a game of the old deal beside the new deal's other rotations.
GAME = """
local p, t, g = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', K.tourney(p, t), 'state') == 'cancelled' then return 0 end
if ARGV[6] and tonumber(redis.call('HGET', K.tourney_table(p, t, ARGV[6]), 'redealt') or 0) ~= tonumber(ARGV[7]) then
  return 0
end
if redis.call('HSETNX', K.tourney_games(p, t), g, ARGV[4]) == 0 then return 0 end
redis.call('HSET', K.tourney_records(p, t), g, ARGV[5])
return 1
"""

# Redeal a deal set whose first rotation an agent may have seen: ARGV = prefix, id, table, the table's
# 'shown' field of that deal set, the table's deal sets JSON as the runner read them, the same with that
# set redrawn, the set's game ids JSON. Only while the field is set (a game of its first rotation with an
# agent was started), none of its games is recorded and the deal sets are still what the runner read:
# of two runners (or a runner and its redelivered task), one draw is stored and both play it. Returns
# {the table's deal sets JSON as stored after, how many times its deal sets were redealt}.
REDEAL = """
local p, t, x, shown = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local table_, deals = K.tourney_table(p, t, x), K.tourney_deals(p, t)
local function stored() return {redis.call('HGET', deals, x), redis.call('HGET', table_, 'redealt') or '0'} end
if redis.call('HEXISTS', table_, shown) == 0 or redis.call('HGET', deals, x) ~= ARGV[5] then return stored() end
for _, game in ipairs(cjson.decode(ARGV[7])) do
  if redis.call('HEXISTS', K.tourney_games(p, t), game) == 1 then return stored() end
end
redis.call('HSET', deals, x, ARGV[6])
redis.call('HDEL', table_, shown)
redis.call('HINCRBY', table_, 'redealt', 1)
return stored()
"""

# Finish a table: ARGV = prefix, id, table, now_ms, its game ids JSON. Only once every one of its
# games is recorded ('incomplete' else: Redis restarted after a crash may have lost the last
# second's results while the runner went on). The first call logs it and counts it; later calls
# change nothing; a cancelled table stays so. Returns {'first'|'duplicate'|'missing'|'incomplete'|
# 'cancelled', tables done, tables of the rounds so far, round}.
FINISH = """
local p, t, x, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local table_ = K.tourney_table(p, t, x)
local state = redis.call('HGET', table_, 'state')
local tourney = K.tourney(p, t)
local function counts(status)
  return {status, tonumber(redis.call('HGET', tourney, 'tables_done')), tonumber(redis.call('HGET', tourney,
    'tables')), tonumber(redis.call('HGET', tourney, 'round'))}
end
if not state then return {'missing', 0, 0, 0} end
if state == 'finished' then return counts('duplicate') end
if state == 'cancelled' then return counts('cancelled') end
for _, game in ipairs(cjson.decode(ARGV[5])) do
  if redis.call('HEXISTS', K.tourney_games(p, t), game) == 0 then return counts('incomplete') end
end
redis.call('HSET', table_, 'state', 'finished', 'finished_ms', now)
redis.call('DEL', K.tourney_lease(p, t, x))
redis.call('HINCRBY', tourney, 'tables_done', 1)
redis.call('XADD', K.tourney_log(p, t), '*', 'table', x)
return counts('first')
"""

# Open the next round: ARGV = prefix, id, round just completed, tables JSON {id: plan JSON}.
# Only when that round is still the current one and all its tables are done (so it happens once).
NEXT_ROUND = """
local p, t, r = ARGV[1], ARGV[2], tonumber(ARGV[3])
local tourney = K.tourney(p, t)
if redis.call('HGET', tourney, 'state') ~= 'running' then return 0 end
if tonumber(redis.call('HGET', tourney, 'round')) ~= r then return 0 end
if redis.call('HGET', tourney, 'tables_done') ~= redis.call('HGET', tourney, 'tables') then return 0 end
local count = 0
for id, plan in pairs(cjson.decode(ARGV[4])) do
  redis.call('HSET', K.tourney_tables(p, t), id, plan)
  redis.call('HSET', K.tourney_table(p, t, id), 'state', 'queued', 'attempts', 0)
  count = count + 1
end
redis.call('HINCRBY', tourney, 'tables', count)
redis.call('HSET', tourney, 'round', r + 1)
return 1
"""

# End: ARGV = prefix, id, last round, now_ms. Once every table of the last round is done.
END = """
local p, t, r = ARGV[1], ARGV[2], tonumber(ARGV[3])
local tourney = K.tourney(p, t)
if tonumber(redis.call('HGET', tourney, 'round')) ~= r then return 0 end
if redis.call('HGET', tourney, 'tables_done') ~= redis.call('HGET', tourney, 'tables') then return 0 end
if redis.call('HGET', tourney, 'state') ~= 'running' then return 0 end
redis.call('HSET', tourney, 'state', 'finished', 'finished_ms', ARGV[4])
return 1
"""

# Cancel: ARGV = prefix, id, now_ms. A running tournament becomes 'cancelled' and so does each of its
# tables not finished (no runner starts one again; a runner in play stops before its next game).
# Returns {'done', tables cancelled}, or {'missing'|'finished'|'cancelled', 0}, nothing changed.
CANCEL = """
local p, t = ARGV[1], ARGV[2]
local tourney = K.tourney(p, t)
local state = redis.call('HGET', tourney, 'state')
if not state then return {'missing', 0} end
if state ~= 'running' then return {state, 0} end
redis.call('HSET', tourney, 'state', 'cancelled', 'finished_ms', ARGV[3])
local count = 0
for _, x in ipairs(redis.call('HKEYS', K.tourney_tables(p, t))) do
  local table_ = K.tourney_table(p, t, x)
  if redis.call('HGET', table_, 'state') ~= 'finished' then
    redis.call('HSET', table_, 'state', 'cancelled')
    count = count + 1
  end
end
return {'done', count}
"""
