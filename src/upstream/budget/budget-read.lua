-- Reads a rate bucket's stored record and the server's clock, the one all processes decide on.
-- KEYS[1]  the bucket's hash: v = version (a write counter), s = the serialized record
-- Returns  { version (0: none stored), serialized record ('' when none), TIME seconds, TIME microseconds }
local h = redis.call('HMGET', KEYS[1], 'v', 's')
local t = redis.call('TIME')
return { tonumber(h[1]) or 0, h[2] or '', t[1], t[2] }
