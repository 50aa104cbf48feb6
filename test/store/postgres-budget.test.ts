// The Postgres budget (the rate budget of workers without Redis) passes every shared store's
// cases (test/helpers/budget-cases.ts), on a database of this file's own, each budget on a
// connection of its own as another process's would be. And what is Postgres's alone: a record
// past its time to live counts as none and is removed, a lost connection (and its LISTEN) only
// slows waiters down to polling, and budgets of other prefixes in one database are apart.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WarehouseSessionOptions } from '../../src/ports/warehouse-session.ts';
import { PostgresBudget } from '../../src/upstream/budget/postgres-budget.ts';
import { budgetChannel, PostgresBudgetStore } from '../../src/upstream/budget/postgres-budget-store.ts';
import type { VersionedBudgetStore } from '../../src/upstream/budget/versioned-budget-store.ts';
import { addLease, budgetCases, settles, type BudgetBackend, type BudgetOverrides } from '../helpers/budget-cases.ts';
import { heldSleep } from '../helpers/fast-clock.ts';
import { useTestWarehouse } from '../helpers/mirror-fixture.ts';
import { uniqueName } from '../helpers/services.ts';
import { waitFor } from '../helpers/workers.ts';

const warehouse = useTestWarehouse({ maxConnections: 2 });
/** The test's own connection, for looking at and writing rows directly. */
let admin: postgres.Sql;
const prefix = uniqueName('tesync_budget');
const closers: (() => Promise<unknown>)[] = [];
/** Each store's connection, for writes that must arrive between its read and its write. */
const connections = new WeakMap<VersionedBudgetStore, postgres.Sql>();

beforeAll(async () => {
  admin = postgres(warehouse.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  if (admin) {
    await admin`delete from sync.rate_budgets where prefix like ${`${prefix}%`}`.catch(() => undefined);
    await admin.end();
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function budget(options: BudgetOverrides = {}): PostgresBudget {
  const b = new PostgresBudget({ warehouse, prefix, leaseMs: 10_000, ...options });
  closers.unshift(() => b.close());
  return b;
}

function store(options: { now?: () => number; ttlMs?: number; prefix?: string } = {}): PostgresBudgetStore {
  let own: postgres.Sql | undefined;
  const capture = { session: (o: WarehouseSessionOptions) => (own = warehouse.session(o)) };
  const s = new PostgresBudgetStore({ warehouse: capture, prefix, ttlMs: 60_000, ...options });
  connections.set(s, own!);
  closers.unshift(() => s.close());
  return s;
}

const rows = async (bucket: string, p = prefix) => (await admin<{ n: number }[]>`select count(*)::int as n from sync.rate_budgets where prefix = ${p} and bucket = ${bucket}`)[0]!.n;

// Every budget and store holds a connection of its own: `separate` is always so.
const backend: BudgetBackend = {
  name: 'Postgres',
  prefix,
  budget: (options) => budget(options),
  dying(options) {
    const b = budget(options);
    return { budget: b, kill: () => b.close() };
  },
  store: (options = {}) => store({ now: options.now }),
  interfere(s, bucket, version, record) {
    // The store's connection: queued before its write.
    void connections.get(s)!`
      insert into sync.rate_budgets (prefix, bucket, record, version, updated_at, expires_at, written_by)
      values (${prefix}, ${bucket}, ${JSON.stringify(record)}::text::jsonb, ${version}, clock_timestamp(), clock_timestamp() + interval '1 minute', 'test')
      on conflict (prefix, bucket) do update set record = excluded.record, version = excluded.version, written_by = excluded.written_by`.catch(() => undefined);
  },
  version: async (bucket) => Number((await admin<{ v: string }[]>`select version::text as v from sync.rate_budgets where prefix = ${prefix} and bucket = ${bucket}`)[0]?.v ?? 0),
  writeUnreadable: async (bucket) => {
    await admin`insert into sync.rate_budgets (prefix, bucket, record, version, updated_at, expires_at, written_by)
                values (${prefix}, ${bucket}, '"not json"'::jsonb, 3, clock_timestamp(), clock_timestamp() + interval '1 minute', 'test')`;
  },
  serverSeconds: async () => (await admin<{ s: number }[]>`select floor(extract(epoch from clock_timestamp()))::float8 as s`)[0]!.s,
};

budgetCases(backend);

describe('Postgres budget store, its own', () => {
  it('a record nobody wrote for its time to live counts as none; a later write removes it', async () => {
    const s = store({ ttlMs: 300 });
    const runs = { n: 0 };
    await s.update('old', addLease('gone', runs));
    await sleep(400);
    expect(await s.update('old', (rec) => ({ record: rec, result: rec.leases }))).toEqual({});
    expect(await rows('old')).toBe(1);
    await s.update('new', addLease('kept', runs));
    expect(await rows('old')).toBe(0);
    expect(await rows('new')).toBe(1);
  });

  it('a lost connection only slows waiters down to polling, and the next update listens again', async () => {
    const a = budget();
    // b's waits end when the test polls for it, or when a change wakes them.
    const polls = heldSleep();
    const b = budget({ sleep: polls.sleep });
    await a.acquire('lost');
    // Nothing known yet: b waits for the probe's answer.
    const waiting = b.acquire('lost');
    await waitFor('b to wait for the probe', () => polls.waiting() === 1 || undefined, 5_000, 10);
    const [killed] = await admin<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
       where datname = current_database() and application_name like '%:budget %'`;
    expect(killed!.n).toBeGreaterThanOrEqual(2);
    // A holder listening on a connection opened since.
    const heard: string[] = [];
    const listener = store();
    listener.onChange((bucket) => heard.push(bucket));
    await listener.update('lost', (rec) => ({ record: rec, result: undefined }));
    let t0 = Date.now();
    // a reconnects and announces; b, its LISTEN gone with its connection, has heard nothing by
    // the time that holder has, and its poll finds the change.
    await a.observe('lost', { status: 200, remaining: 50, resetAtMs: t0 + 10_000, sentAtMs: t0 - 200 });
    await waitFor('the announcement to reach a holder that listens', () => heard.includes('lost') || undefined, 5_000, 10);
    expect(polls.woken()).toBe(0);
    polls.poll();
    await settles("b's poll to find the change", waiting);

    // b's poll listened again: the next change wakes it at once.
    await a.acquire('lost-again');
    const again = b.acquire('lost-again');
    await waitFor('b to wait for the next probe', () => polls.waiting() === 1 || undefined, 5_000, 10);
    t0 = Date.now();
    await a.observe('lost-again', { status: 200, remaining: 50, resetAtMs: t0 + 10_000, sentAtMs: t0 - 200 });
    await settles("b's wait to end on a's change", again);
    expect(polls.woken()).toBe(1);
  });

  it('budgets of other prefixes in the same database neither share records nor hear each other', async () => {
    const one = store({ prefix: `${prefix}:one` });
    const oneElsewhere = store({ prefix: `${prefix}:one` });
    const two = store({ prefix: `${prefix}:two` });
    const heard: string[] = [];
    oneElsewhere.onChange((bucket) => heard.push(`one:${bucket}`));
    two.onChange((bucket) => heard.push(`two:${bucket}`));
    // Both listening before the change.
    await oneElsewhere.update('gateway', (rec) => ({ record: rec, result: undefined }));
    await two.update('gateway', (rec) => ({ record: rec, result: undefined }));
    await one.update('gateway', addLease('mine', { n: 0 }), { announce: true });
    // By the time the budget of the same prefix heard the change, the other had too, were it listening.
    await waitFor('the change to reach the budget of its prefix', () => heard.length > 0 || undefined, 5_000, 10);
    expect(heard).toEqual(['one:gateway']);
    expect(await two.update('gateway', (rec) => ({ record: rec, result: rec.leases }))).toEqual({});
    expect(await oneElsewhere.update('gateway', (rec) => ({ record: rec, result: Object.keys(rec.leases) }))).toEqual(['mine']);
  });

  it('names its channel after the prefix, hashed when that would be too long for Postgres', () => {
    expect(budgetChannel('tesync')).toBe('tesync_budget:tesync');
    const long = budgetChannel('x'.repeat(100));
    expect(long).toMatch(/^tesync_budget:[0-9a-f]{32}$/);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(63);
  });
});
