-- Enters a job in a run: counted once (in `planned`), however many times it is entered.
-- KEYS[1]  the run's `seen` set (every job it entered)
-- KEYS[2]  its `pending` set (entered, not settled)
-- KEYS[3]  its stats hash
-- ARGV[1]  the job's id
-- ARGV[2]  the keys' time to live, ms
-- Returns  1 new, 2 entered before and not settled, 0 settled
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[3], 'planned', 1)
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
if added == 1 then return 1 end
return redis.call('SISMEMBER', KEYS[2], ARGV[1]) * 2
