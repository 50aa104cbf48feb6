// The rate budget shared by every worker process: the transitions of budget-state.ts, run
// atomically in Redis (Lua) under Redis time, so machines with skewed clocks agree.
//
// - A grant is a lease in a sorted set, scored by its expiry: a process that dies with
//   requests in flight frees their slots when the leases expire (request timeout + margin).
// - Times from this machine (Retry-After ends, window resets) go to Redis as durations and
//   are added to Redis time there, so a skewed local clock cannot shorten a block.
// - A change (an observation) is published; waiting processes wake and decide again, and
//   also poll in case a message is lost.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimitedError } from '../errors.ts';
import { realSleep, type AcquireOptions, type RateBudget, type Sleep } from './budget.ts';
import {
  DEFAULT_BUDGET_POLICY,
  jitterFor,
  MAX_LEARNED_WINDOW_MS,
  RESERVE_REASON,
  WINDOW_LADDER_MS,
  type BucketMode,
  type BucketState,
  type BucketStatus,
  type BudgetPolicy,
  type Observation,
} from './budget-state.ts';
import { BUCKETS } from './routes.ts';
import { BucketWaiters } from './waiters.ts';

/** Loads a script once per connection (EVALSHA, EVAL after a NOSCRIPT). */
export function luaScript(lua: string): (redis: Redis, keys: string[], args: (string | number)[]) => Promise<unknown> {
  let sha: string | undefined;
  return async (redis, keys, args) => {
    sha ??= (await redis.script('LOAD', lua)) as string;
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      return redis.eval(lua, keys.length, ...keys, ...args);
    }
  };
}

// Shared by both scripts: the clock, expired leases, and the state hash as locals.
const PRELUDE = `
local stateKey, leasesKey = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
local h = redis.call('HGETALL', stateKey)
local s = {}
for i = 1, #h, 2 do s[h[i]] = h[i + 1] end
local mode = s.mode or 'unknown'
local remaining = tonumber(s.remaining)
local limit = tonumber(s.limit)
local resetAt = tonumber(s.resetAt)
local observedAt = tonumber(s.observedAt)
local blockedUntil = tonumber(s.blockedUntil) or 0
local blockReason = s.blockReason
local windowLo = tonumber(s.windowLo)
local windowHi = tonumber(s.windowHi)
local windowFrom = tonumber(s.windowFrom)
local function put(field, value)
  if value == nil then redis.call('HDEL', stateKey, field) else redis.call('HSET', stateKey, field, tostring(value)) end
end
local function save(ttl)
  put('mode', mode); put('remaining', remaining); put('limit', limit); put('resetAt', resetAt)
  put('observedAt', observedAt); put('blockedUntil', blockedUntil); put('blockReason', blockReason)
  put('windowLo', windowLo); put('windowHi', windowHi); put('windowFrom', windowFrom)
  -- the single learned length of the previous version
  redis.call('HDEL', stateKey, 'windowMs')
  redis.call('PEXPIRE', stateKey, ttl)
end
local function view(inFlight)
  return { mode, remaining or -1, limit or -1, inFlight, resetAt or -1, observedAt or -1, blockedUntil, windowLo or -1, windowHi or -1, windowFrom or -1 }
end
`;

// decide(): ARGV now?, leaseId, leaseMs, probeConcurrency, resetMarginMs, unknownResetProbeMs, ttlMs, probeReserve
// → { granted 0/1, now, untilMs (-1: until an observation), reason, ...view }
const ACQUIRE = `${PRELUDE}
local leaseId, leaseMs = ARGV[2], tonumber(ARGV[3])
local probe, margin, probeAfter, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local reserve = tonumber(ARGV[8])
local ladder = { ${WINDOW_LADDER_MS.join(', ')} }
local inFlight = redis.call('ZCARD', leasesKey)
local function answer(granted, untilMs, reason)
  local out = { granted, now, untilMs, reason }
  for _, v in ipairs(view(inFlight)) do table.insert(out, v) end
  return out
end
local function windowMargin(length)
  return math.min(margin, math.floor(length / 10))
end
local function ladderAt()
  if not windowFrom then return nil end
  local lo = windowLo or 0
  for _, rung in ipairs(ladder) do
    if rung > lo then return windowFrom + rung + windowMargin(rung) end
  end
  return nil
end
local function probeAt()
  if resetAt or not windowFrom then return nil end
  local lo = windowLo or 0
  if not windowHi then return ladderAt() end
  if windowHi - lo <= 2 * margin then return nil end
  return windowFrom + math.floor((lo + windowHi) / 2)
end
if now < blockedUntil then return answer(0, blockedUntil, blockReason or 'retry-after') end
if mode == 'metered' then
  local left = (remaining or 0) - inFlight
  if left <= 0 then
    local freshAt, why
    if resetAt then
      freshAt = resetAt + margin; why = 'budget exhausted until reset'
    elseif windowHi and windowFrom then
      freshAt = windowFrom + windowHi + windowMargin(windowHi); why = 'budget exhausted until the learned window ends'
    else
      freshAt = ladderAt() or (observedAt or now) + probeAfter; why = 'budget exhausted, reset unknown'
    end
    if now < freshAt then return answer(0, freshAt, why) end
    if inFlight > 0 then return answer(0, -1, why) end
    mode = 'unknown'; remaining = nil; resetAt = nil; observedAt = now
    save(ttl)
  elseif left <= reserve then
    local at = probeAt()
    if at and inFlight > 0 then return answer(0, -1, '${RESERVE_REASON}') end
    if at and now < at then return answer(0, at, '${RESERVE_REASON}') end
  end
end
if mode == 'unknown' and inFlight >= probe then return answer(0, -1, 'probing the budget') end
redis.call('ZADD', leasesKey, now + leaseMs, leaseId)
redis.call('PEXPIRE', leasesKey, math.max(ttl, leaseMs))
inFlight = inFlight + 1
return answer(1, -1, '')
`;

// observe(): ARGV now?, leaseId|'', status|'', remaining|'', limit|'', resetInMs|'', blockedForMs|'',
// sentAt|'' (Redis time), ttlMs, channel, bucket → view
const OBSERVE = `${PRELUDE}
local leaseId = ARGV[2]
local status, obsRemaining, obsLimit = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local resetIn, blockedFor, sentAt, ttl = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
if leaseId ~= '' then redis.call('ZREM', leasesKey, leaseId) end
local fresh = sentAt == nil or observedAt == nil or sentAt >= observedAt
local function believable(ms)
  return ms > 0 and ms <= ${MAX_LEARNED_WINDOW_MS}
end
local function longerThan(ms)
  if not believable(ms) then return end
  windowLo = math.max(windowLo or 0, ms)
  if windowHi and windowHi < windowLo then windowHi = nil end
end
local function atMost(ms)
  if not believable(ms) then return end
  windowHi = math.min(windowHi or math.huge, ms)
  if windowLo and windowLo > windowHi then windowLo = windowHi end
end
if status == 429 or blockedFor ~= nil then
  local untilObs = now
  if blockedFor ~= nil then untilObs = now + blockedFor end
  blockedUntil = math.max(blockedUntil, untilObs)
  mode = 'unknown'; remaining = nil; resetAt = nil
  blockReason = 'retry-after'; observedAt = now
  if obsLimit ~= nil then limit = obsLimit end
  if resetIn ~= nil and windowFrom ~= nil then
    local length = now + resetIn - windowFrom
    if believable(length) then windowLo = length; windowHi = length end
  end
  windowFrom = nil
elseif status == nil then
  -- no response: only the lease is released
elseif obsRemaining ~= nil then
  local obsResetAt = nil
  if resetIn ~= nil then obsResetAt = now + resetIn end
  if fresh or mode == 'unmetered' then
    local from = sentAt or now
    local refilled
    if mode == 'metered' then refilled = obsRemaining >= (remaining or math.huge) else refilled = mode == 'unknown' and windowFrom ~= nil end
    local opened = mode ~= 'metered' or refilled
    if windowFrom ~= nil and refilled then atMost(now - windowFrom)
    elseif windowFrom ~= nil and not opened then longerThan(from - windowFrom) end
    if opened then windowFrom = from end
    mode = 'metered'; remaining = obsRemaining; resetAt = obsResetAt; observedAt = now
  elseif mode == 'metered' then
    if resetAt == nil or obsResetAt == nil then resetAt = resetAt or obsResetAt else resetAt = math.max(resetAt, obsResetAt) end
    if obsRemaining < (remaining or math.huge) then remaining = obsRemaining; observedAt = now end
  end
  if obsLimit ~= nil then limit = obsLimit end
elseif fresh and mode == 'unknown' and status >= 200 and status < 400 then
  mode = 'unmetered'; observedAt = now
end
save(ttl)
redis.call('PUBLISH', ARGV[10], ARGV[11])
return view(redis.call('ZCARD', leasesKey))
`;

const acquireScript = luaScript(ACQUIRE);
const observeScript = luaScript(OBSERVE);

export interface RedisBudgetOptions {
  /** Commands go here; a duplicate connection subscribes to change messages. Not closed by the budget. */
  redis: Redis;
  /** Key prefix shared by every process that shares the budget. */
  prefix: string;
  /** How long a grant holds its slot without an observation (request timeout + margin). */
  leaseMs: number;
  policy?: Partial<BudgetPolicy>;
  /** Tests: a fixed clock for both sides (Redis scripts and local conversions). */
  now?: () => number;
  random?: () => number;
  sleep?: Sleep;
}

/** One step of the state machine, for tests and for acquire's loop. */
export type RedisDecision = { grant: true; nowMs: number; leaseId: string } | { grant: false; nowMs: number; untilMs: number | undefined; reason: string };

interface Lease {
  id: string;
  /** Redis time of the grant: the observation's send time, on the shared clock. */
  grantedAt: number;
  /** Local time of the grant, to match the client's sentAtMs. */
  localAt: number;
}

const STATE_TTL_MS = 24 * 3600_000;

export class RedisBudget implements RateBudget {
  readonly policy: BudgetPolicy;
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly leaseMs: number;
  private readonly fixedNow: (() => number) | undefined;
  private readonly random: () => number;
  private readonly sleep: Sleep;
  private readonly leases = new Map<string, Lease[]>();
  private readonly waiters: BucketWaiters;
  private readonly views = new Map<string, { state: BucketState; untilLocal: number | undefined; reason: string | undefined }>();
  private readonly offsets = new Map<string, number>();
  private readonly subscribed: Promise<unknown>;

  constructor(options: RedisBudgetOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.channel = `${options.prefix}:budget:changed`;
    this.leaseMs = options.leaseMs;
    this.policy = { ...DEFAULT_BUDGET_POLICY, ...options.policy };
    this.fixedNow = options.now;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? realSleep;
    this.waiters = new BucketWaiters(this.sleep);
    this.subscriber = options.redis.duplicate();
    this.subscriber.on('message', (_channel: string, bucket: string) => this.waiters.wake(bucket));
    // A lost subscription only slows waiters down to polling: never fatal.
    this.subscriber.on('error', () => {});
    this.subscribed = this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  async acquire(bucket: string, opts: AcquireOptions = {}): Promise<{ waitedMs: number }> {
    await this.subscribed;
    const started = this.localNow();
    const maxWaitMs = opts.maxWaitMs ?? Number.POSITIVE_INFINITY;
    for (;;) {
      opts.signal?.throwIfAborted();
      const d = await this.tryAcquire(bucket);
      if (d.grant) return { waitedMs: this.localNow() - started };
      const left = maxWaitMs - (this.localNow() - started);
      const untilIn = d.untilMs === undefined ? undefined : d.untilMs - d.nowMs;
      if (untilIn !== undefined && untilIn > left) throw new RateLimitedError(bucket, untilIn, d.reason);
      if (untilIn === undefined && left <= 0) throw new RateLimitedError(bucket, this.policy.pollMs, d.reason);
      const timed = untilIn !== undefined ? untilIn + jitterFor(untilIn, this.random(), this.policy) : this.policy.pollMs;
      await this.waiters.wait(bucket, Math.min(timed, Math.max(1, left)), opts.signal);
    }
  }

  /** One atomic decision; a grant takes a lease that the next observation of the bucket releases. */
  async tryAcquire(bucket: string): Promise<RedisDecision> {
    const leaseId = `${process.pid}.${randomBytes(6).toString('hex')}`;
    const p = this.policy;
    const r = (await acquireScript(this.redis, this.keys(bucket), [this.nowArg(), leaseId, this.leaseMs, p.probeConcurrency, p.resetMarginMs, p.unknownResetProbeMs, STATE_TTL_MS, p.probeReserve])) as (string | number)[];
    const granted = Number(r[0]) === 1;
    const nowMs = Number(r[1]);
    const untilMs = Number(r[2]) < 0 ? undefined : Number(r[2]);
    const reason = String(r[3]);
    this.remember(bucket, r.slice(4), nowMs, granted ? undefined : untilMs, granted ? undefined : reason);
    if (!granted) return { grant: false, nowMs, untilMs, reason };
    const list = this.leases.get(bucket) ?? [];
    list.push({ id: leaseId, grantedAt: nowMs, localAt: this.localNow() });
    this.leases.set(bucket, list);
    return { grant: true, nowMs, leaseId };
  }

  async observe(bucket: string, obs: Observation): Promise<void> {
    const local = this.localNow();
    const lease = obs.granted === false ? undefined : this.takeLease(bucket, obs.sentAtMs);
    // Without a lease of ours, the local send time is moved onto Redis time by the offset
    // seen at the last decision; with one, the grant's own Redis time is exact.
    const sentAt = lease ? lease.grantedAt : obs.sentAtMs === undefined ? '' : this.toRedisTime(bucket, obs.sentAtMs);
    const rel = (at: number | undefined) => (at === undefined ? '' : Math.ceil(at - local));
    const args = [
      this.nowArg(),
      lease?.id ?? '',
      obs.status ?? '',
      obs.remaining ?? '',
      obs.limit ?? '',
      rel(obs.resetAtMs),
      rel(obs.blockedUntilMs),
      sentAt,
      STATE_TTL_MS,
      this.channel,
      bucket,
    ];
    const view = (await observeScript(this.redis, this.keys(bucket), args)) as (string | number)[];
    this.remember(bucket, view, undefined, undefined, undefined);
  }

  snapshot(): BucketStatus[] {
    const names = [...new Set([...BUCKETS, ...this.views.keys()])];
    const local = this.localNow();
    return names.map((bucket) => {
      const v = this.views.get(bucket);
      const waiting = v?.untilLocal !== undefined && v.untilLocal > local;
      return {
        bucket,
        mode: v?.state.mode ?? 'unknown',
        remaining: v?.state.remaining,
        limit: v?.state.limit,
        inFlight: v?.state.inFlight ?? 0,
        waiters: this.waiters.count(bucket),
        waitingUntilMs: waiting ? v!.untilLocal : undefined,
        reason: waiting ? v!.reason : undefined,
      };
    });
  }

  /** The shared state as the pure state machine sees it (tests, diagnostics). */
  async readState(bucket: string): Promise<BucketState> {
    const [h, inFlight] = await Promise.all([this.redis.hgetall(this.keys(bucket)[0]!), this.redis.zcard(this.keys(bucket)[1]!)]);
    const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
    return {
      mode: (h.mode as BucketMode | undefined) ?? 'unknown',
      inFlight,
      remaining: num(h.remaining),
      limit: num(h.limit),
      resetAtMs: num(h.resetAt),
      observedAtMs: num(h.observedAt),
      blockedUntilMs: num(h.blockedUntil) ?? 0,
      blockReason: h.blockReason,
      windowLoMs: num(h.windowLo),
      windowHiMs: num(h.windowHi),
      windowFromMs: num(h.windowFrom),
    };
  }

  async close(): Promise<void> {
    this.waiters.wakeAll();
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  private keys(bucket: string): [string, string] {
    return [`${this.prefix}:budget:${bucket}`, `${this.prefix}:budget:${bucket}:leases`];
  }

  private nowArg(): string | number {
    return this.fixedNow ? this.fixedNow() : '';
  }

  private localNow(): number {
    return this.fixedNow ? this.fixedNow() : Date.now();
  }

  private toRedisTime(bucket: string, localMs: number): number {
    return Math.round(localMs + this.offset(bucket));
  }

  /** Redis time minus local time, as measured at the last decision for the bucket. */
  private offset(bucket: string): number {
    return this.offsets.get(bucket) ?? 0;
  }

  /** The lease granted closest before the request was sent (requests of one bucket are interchangeable). */
  private takeLease(bucket: string, sentAtMs: number | undefined): Lease | undefined {
    const list = this.leases.get(bucket);
    if (!list || list.length === 0) return undefined;
    let best = 0;
    if (sentAtMs !== undefined) {
      for (let i = 0; i < list.length; i++) if (list[i]!.localAt <= sentAtMs && list[i]!.localAt >= list[best]!.localAt) best = i;
    }
    return list.splice(best, 1)[0];
  }

  private remember(bucket: string, v: (string | number)[], redisNow: number | undefined, untilMs: number | undefined, reason: string | undefined): void {
    const local = this.localNow();
    if (redisNow !== undefined) this.offsets.set(bucket, redisNow - local);
    const n = (x: string | number | undefined) => (x === undefined || Number(x) < 0 ? undefined : Number(x));
    const state: BucketState = {
      mode: String(v[0]) as BucketMode,
      remaining: n(v[1]),
      limit: n(v[2]),
      inFlight: Number(v[3]),
      resetAtMs: n(v[4]),
      observedAtMs: n(v[5]),
      blockedUntilMs: Number(v[6] ?? 0),
      blockReason: undefined,
      windowLoMs: n(v[7]),
      windowHiMs: n(v[8]),
      windowFromMs: n(v[9]),
    };
    const untilLocal = untilMs === undefined ? undefined : untilMs - this.offset(bucket);
    this.views.set(bucket, { state, untilLocal, reason });
  }


}
