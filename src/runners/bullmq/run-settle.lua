-- Settles a job of a run: its outcome counted only by the call that takes it out of `pending`.
-- KEYS[1]  the run's `pending` set
-- KEYS[2]  its stats hash
-- KEYS[3]  its failures list
-- ARGV[1]  the job's id
-- ARGV[2]  the outcome's kind (a stats field; `deduplicated` takes the job back out of `planned`)
-- ARGV[3]  rows written
-- ARGV[4]  a stats field to count too ('' none)
-- ARGV[5]  the failure as JSON ('' none)
-- ARGV[6]  the most failures kept
-- ARGV[7]  the failures list's time to live, ms
-- Returns  { 1 counted / 0 settled before, jobs still pending }
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return { 0, redis.call('SCARD', KEYS[1]) } end
if ARGV[2] == 'deduplicated' then
  redis.call('HINCRBY', KEYS[2], 'planned', -1)
  redis.call('HINCRBY', KEYS[2], 'deduplicated', 1)
else
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[2], 'rows', tonumber(ARGV[3]))
  if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[2], ARGV[4], 1) end
end
if ARGV[5] ~= '' and redis.call('LLEN', KEYS[3]) < tonumber(ARGV[6]) then
  redis.call('RPUSH', KEYS[3], ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
return { 1, redis.call('SCARD', KEYS[1]) }
