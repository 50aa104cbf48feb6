// A shared budget store that lost its latest writes (a Redis Cluster's failover promotes a
// replica that had not received them): the record comes back older, so more generous, than
// the one the holders acted on. A holder that sees another node answer for the record reads it
// as such (redis-budget-store.ts), and the budget goes on at most as generously as before: no
// grant on the old count, its own leases still held, a block it knew of still holding. Here
// the store is in memory, and its failover a rewind to an earlier copy of its records.
import { describe, expect, it } from 'vitest';
import { afterLostWrites, DEFAULT_BUDGET_POLICY, initialBucketState, LOST_WRITES_REASON } from '../../../src/upstream/budget/budget-state.ts';
import { Budget } from '../../../src/upstream/budget/budget.ts';
import { recovered, VersionedBudgetStore, type VersionedRead } from '../../../src/upstream/budget/versioned-budget-store.ts';

type Records = Map<string, { v: number; s: string }>;

/** Holders' stores over one set of records; failover() rewinds them, and each holder's next look sees another node. */
class Cluster {
  records: Records = new Map();
  nowMs = 1_000_000;
  readonly holders: FailoverStore[] = [];
  copy(): Records {
    return new Map(this.records);
  }
  failover(to: Records): void {
    this.records = new Map(to);
    for (const h of this.holders) h.moved = true;
  }
}

class FailoverStore extends VersionedBudgetStore {
  moved = false;
  constructor(private readonly cluster: Cluster) {
    super(() => cluster.nowMs);
    cluster.holders.push(this);
  }
  protected ready(): Promise<unknown> {
    return Promise.resolve();
  }
  protected async read(bucket: string): Promise<VersionedRead> {
    const r = this.cluster.records.get(bucket);
    const lost = this.moved;
    this.moved = false;
    return { version: r?.v ?? 0, serialized: r?.s ?? '', nowMs: this.cluster.nowMs, lost };
  }
  protected async write(bucket: string, version: number, serialized: string): Promise<VersionedRead | undefined> {
    if ((this.cluster.records.get(bucket)?.v ?? 0) !== version) return this.read(bucket);
    this.cluster.records.set(bucket, { v: version + 1, s: serialized });
    return undefined;
  }
  async close(): Promise<void> {}
}

const budgetOn = (cluster: Cluster) => new Budget(new FailoverStore(cluster), { now: () => cluster.nowMs, leaseMs: 10_000, random: () => 0 });

describe('a budget whose store lost writes', () => {
  it('grants nothing on the older, higher count: its leases are held, the window is waited out, then the next request is a probe', async () => {
    const cluster = new Cluster();
    const a = budgetOn(cluster);
    const b = budgetOn(cluster);
    // A learns the bucket: 10 left in a window that resets in a minute. The replica has this much.
    await a.acquire('gateway');
    const resetAtMs = cluster.nowMs + 60_000;
    await a.observe('gateway', { status: 200, remaining: 10, resetAtMs, sentAtMs: cluster.nowMs });
    const replica = cluster.copy();
    // Then, on the primary only: 9 more granted (A 5, B 4), none answered yet.
    for (let i = 0; i < 5; i++) expect((await a.tryAcquire('gateway')).grant).toBe(true);
    for (let i = 0; i < 4; i++) expect((await b.tryAcquire('gateway')).grant).toBe(true);
    expect((await a.readState('gateway')).inFlight).toBe(9);
    const sentAt = cluster.nowMs;

    cluster.nowMs += 10;
    cluster.failover(replica);
    // The replica's record would grant 10 more; after the failover, A's first look finds its
    // own 5 leases (and B's, as A last saw them) still in flight, and the window they metered,
    // which the lost writes may have spent, held until it ends: nothing goes.
    const attempt = await a.tryAcquire('gateway');
    expect(attempt).toMatchObject({ grant: false, untilMs: resetAtMs + DEFAULT_BUDGET_POLICY.resetMarginMs, reason: LOST_WRITES_REASON });
    const state = await b.readState('gateway');
    expect(state).toMatchObject({ mode: 'unknown', remaining: undefined, inFlight: 9 });

    // As the requests in flight are answered, their slots free; the answers, sent before the
    // failover was seen, teach nothing. Nothing goes before the window's end; then one probe
    // goes, and its answer is the budget again.
    cluster.nowMs += 50;
    for (let i = 0; i < 5; i++) await a.observe('gateway', { status: 200, remaining: 5 - i, sentAtMs: sentAt });
    for (let i = 0; i < 4; i++) await b.observe('gateway', { status: 200, remaining: 1, sentAtMs: sentAt });
    expect(await a.readState('gateway')).toMatchObject({ mode: 'unknown', inFlight: 0 });
    expect((await a.tryAcquire('gateway')).grant).toBe(false);
    expect((await b.tryAcquire('gateway')).grant).toBe(false);
    cluster.nowMs = resetAtMs + DEFAULT_BUDGET_POLICY.resetMarginMs;
    expect((await a.tryAcquire('gateway')).grant).toBe(true);
    expect((await b.tryAcquire('gateway')).grant).toBe(false);
    cluster.nowMs += 10;
    await a.observe('gateway', { status: 200, remaining: 0, sentAtMs: cluster.nowMs - 5, resetAtMs: cluster.nowMs + 500 });
    expect(await b.readState('gateway')).toMatchObject({ mode: 'metered', remaining: 0, inFlight: 0 });
    expect((await b.tryAcquire('gateway')).grant).toBe(false);
  });

  it('keeps a Retry-After the lost writes held', async () => {
    const cluster = new Cluster();
    const a = budgetOn(cluster);
    const b = budgetOn(cluster);
    await a.acquire('app-public');
    const replica = cluster.copy();
    await a.observe('app-public', { status: 429, blockedUntilMs: cluster.nowMs + 30_000 });
    cluster.failover(replica);
    // B never saw the block; A did, and its first look after the failover writes it back.
    const fromA = await a.tryAcquire('app-public');
    expect(fromA).toMatchObject({ grant: false, untilMs: cluster.nowMs + 30_000, reason: 'retry-after' });
    expect(await b.tryAcquire('app-public')).toMatchObject({ grant: false, untilMs: cluster.nowMs + 30_000 });
  });

  it('afterLostWrites and recovered are pure: the stricter block, the metered window waited out, unknown mode, every live lease', () => {
    const policy = DEFAULT_BUDGET_POLICY;
    const blocked = { ...initialBucketState(), remaining: 7, windowFromMs: 5, blockedUntilMs: 10, blockReason: 'retry-after' };
    expect(afterLostWrites(blocked, { ...blocked, blockedUntilMs: 500 }, 100)).toMatchObject({ mode: 'unknown', remaining: undefined, observedAtMs: 100, blockedUntilMs: 500, windowFromMs: undefined });
    expect(afterLostWrites(blocked, undefined, 100)).toMatchObject({ blockedUntilMs: 10, blockReason: 'retry-after' });
    // A metered window, with a reset time or a learned length, in the store or in what this
    // holder knew: whichever ends last is waited out, as a window that ran dry would be.
    const metered = { ...initialBucketState(), mode: 'metered' as const, remaining: 7, inFlight: 1, resetAtMs: 2000 };
    expect(afterLostWrites(metered, undefined, 100, policy)).toMatchObject({ mode: 'unknown', blockedUntilMs: 2000 + policy.resetMarginMs, blockReason: LOST_WRITES_REASON });
    const learned = { ...initialBucketState(), mode: 'metered' as const, remaining: 3, windowFromMs: 50, windowLoMs: 9000, windowHiMs: 10_000 };
    expect(afterLostWrites(metered, learned, 100, policy)).toMatchObject({ blockedUntilMs: 10_050 + policy.resetMarginMs, blockReason: LOST_WRITES_REASON });
    // A block longer than the window stays; a window that ended long ago holds nothing.
    expect(afterLostWrites({ ...metered, blockedUntilMs: 60_000, blockReason: 'retry-after' }, undefined, 100, policy)).toMatchObject({ blockedUntilMs: 60_000, blockReason: 'retry-after' });
    expect(afterLostWrites(metered, undefined, 50_000, policy).blockedUntilMs).toBeLessThan(50_000);
    // Not metered: nothing known to wait out.
    expect(afterLostWrites({ ...initialBucketState(), mode: 'unmetered' }, undefined, 100, policy).blockedUntilMs).toBe(0);
    const r = recovered({ state: metered, leases: { s1: 200, s2: 50 } }, { state: metered, leases: { k1: 300, k2: 90 } }, 100);
    expect(r.leases).toEqual({ s1: 200, k1: 300 });
  });
});
