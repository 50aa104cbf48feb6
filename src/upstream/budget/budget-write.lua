-- Compare-and-set of a rate bucket's stored record: written only if nobody wrote since it was read.
-- KEYS[1]  the bucket's hash: v = version (a write counter), s = the serialized record
-- ARGV[1]  the version the new record was computed from
-- ARGV[2]  the new serialized record
-- ARGV[3]  the hash's time to live, ms
-- ARGV[4]  channel to publish the change on ('' for none)
-- ARGV[5]  the message to publish
-- Returns  { 1 } when written; on a conflict { 0 } followed by what budget-read.lua returns
local h = redis.call('HMGET', KEYS[1], 'v', 's')
local v = tonumber(h[1]) or 0
if v ~= tonumber(ARGV[1]) then
  local t = redis.call('TIME')
  return { 0, v, h[2] or '', t[1], t[2] }
end
redis.call('HSET', KEYS[1], 'v', v + 1, 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return { 1 }
