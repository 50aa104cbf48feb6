// The rate budget's records in the warehouse's Postgres (sync.rate_budgets), shared by every
// worker process and machine that runs without Redis: the store the budget declares
// (budget-store.ts), as the Redis one is, with the same compare-and-set loop
// (versioned-budget-store.ts). It reaches the warehouse through a session it is handed (the
// port src/ports/warehouse-session.ts), never through the store's modules.
//
// - Compare-and-set on the row's version, not a transaction holding `SELECT ... FOR UPDATE`:
//   a row lock would be held across a round trip to Node, so a process that stalls (a GC
//   pause, a busy event loop) or dies mid-update would stall every other process's decisions
//   of the bucket; and a locked update costs four round trips (begin, select, update, commit)
//   where this costs two (read, write) and a third only when another process wrote between.
// - The clock is the server's `clock_timestamp()`, read in the statement that reads the
//   record, so machines with skewed clocks agree.
// - One connection per store: statements and LISTEN share it (a session of its own, so a
//   decision never waits behind warehouse writes for a pooled connection). A write announces
//   itself with `pg_notify` in the same statement, delivered on commit. A lost connection
//   loses the LISTEN with it: waiters poll meanwhile, and the next update listens again.
// - A row nobody wrote for `ttlMs` counts as none; writes remove such rows now and then.
import { systemPacingClock, type PacingClock } from '../../ports/pacing-clock.ts';
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { VersionedBudgetStore, type VersionedRead } from './versioned-budget-store.ts';
import type { WarehouseSessions } from '../../ports/warehouse-session.ts';
import { isConnectionError, withReconnect } from '../../lib/reconnect.ts';

export interface PostgresBudgetStoreOptions {
  /** The store opens a session of its own on it (one connection), closed with the store. */
  warehouse: WarehouseSessions;
  /** The budget: every process that shares it uses the same prefix. */
  prefix: string;
  /** A record nobody writes for this long counts as none, and is removed. */
  ttlMs: number;
  /** The pacing clock's reading (tests: a skewed one); decisions run on the server's clock. */
  now?: PacingClock['now'];
  /** The command holding the session, in its name (`status-serve`): `tesync reset --queues` says who to stop. */
  holder?: string | undefined;
}

/** A LISTEN that failed is tried again by the first update after this pause. */
const RELISTEN_MS = 5000;
/** Expired rows are removed by a write at most this often (and at least once per ttl). */
const SWEEP_EVERY_MS = 3600_000;
/** Postgres truncates longer channel names (NAMEDATALEN - 1). */
const MAX_CHANNEL_BYTES = 63;

interface Row {
  now_ms: number;
  version: string;
  record: string;
  written_by: string;
}

export class PostgresBudgetStore extends VersionedBudgetStore {
  private readonly sql: postgres.Sql;
  private readonly channel: string;
  private readonly ttl: string;
  private readonly sweepEveryMs: number;
  private readonly localNow: PacingClock['now'];
  private lastSweepMs = Number.NEGATIVE_INFINITY;
  private writeCount = 0;
  private listening: Promise<boolean> | undefined;
  private closed = false;

  constructor(private readonly options: PostgresBudgetStoreOptions) {
    super(options.now);
    this.localNow = options.now ?? systemPacingClock.now;
    this.channel = budgetChannel(options.prefix);
    this.ttl = `${Math.max(1, Math.round(options.ttlMs))} milliseconds`;
    this.sweepEveryMs = Math.min(options.ttlMs, SWEEP_EVERY_MS);
    this.sql = options.warehouse.session({
      // Named under the prefix first (`<prefix>:...`, as tesync names its other sessions), so a cut at 63 bytes keeps it.
      name: `${options.prefix}:budget ${options.holder ? `${options.holder} ` : ''}${this.id}`,
      onNotify: (channel, payload) => {
        if (channel === this.channel) this.heard(payload);
      },
      // The LISTEN went with the connection: the next update listens on the new one.
      onClose: () => {
        this.listening = undefined;
      },
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sql.end({ timeout: 2 }).catch(() => {});
  }

  /** Listens for other holders' changes; a failure leaves waiters to poll, never fails an update. */
  protected ready(): Promise<unknown> {
    if (this.closed) return Promise.resolve(false);
    if (this.listening) return this.listening;
    const attempt: Promise<boolean> = this.sql`listen ${this.sql(this.channel)}`.then(
      () => true,
      () => {
        setTimeout(() => {
          if (this.listening === attempt) this.listening = undefined;
        }, RELISTEN_MS).unref();
        return false;
      },
    );
    this.listening = attempt;
    return attempt;
  }

  protected async read(bucket: string): Promise<VersionedRead> {
    return (await this.readRow(bucket)).read;
  }

  protected async write(bucket: string, version: number, serialized: string, announce: boolean): Promise<VersionedRead | undefined> {
    const { prefix } = this.options;
    const writtenBy = `${this.id}.${++this.writeCount}`;
    const sweep = this.localNow() - this.lastSweepMs >= this.sweepEveryMs;
    if (sweep) this.lastSweepMs = this.localNow();
    const message = this.message(bucket);
    let written: boolean;
    try {
      // The other statements of one: the announcement only of a write that took place, and
      // the removal of expired rows (never this bucket's: one statement must not both update
      // and delete a row).
      const [row] =
        version === 0
          ? await this.sql<{ written: number }[]>`
              with w as (
                insert into sync.rate_budgets (prefix, bucket, record, version, updated_at, expires_at, written_by)
                values (${prefix}, ${bucket}, ${serialized}::text::jsonb, 1, clock_timestamp(), clock_timestamp() + ${this.ttl}::interval, ${writtenBy})
                on conflict (prefix, bucket) do nothing
                returning 1
              ), n as (
                select pg_notify(${this.channel}, ${message}) from w where ${announce}
              ), d as (
                delete from sync.rate_budgets where ${sweep} and expires_at < clock_timestamp() and (prefix, bucket) <> (${prefix}, ${bucket}) returning 1
              )
              select (select count(*) from w)::int as written, (select count(*) from n)::int as announced, (select count(*) from d)::int as swept`
          : await this.sql<{ written: number }[]>`
              with w as (
                update sync.rate_budgets
                   set record = ${serialized}::text::jsonb, version = version + 1, updated_at = clock_timestamp(),
                       expires_at = clock_timestamp() + ${this.ttl}::interval, written_by = ${writtenBy}
                 where prefix = ${prefix} and bucket = ${bucket} and version = ${String(version)}::text::bigint
                returning 1
              ), n as (
                select pg_notify(${this.channel}, ${message}) from w where ${announce}
              ), d as (
                delete from sync.rate_budgets where ${sweep} and expires_at < clock_timestamp() and (prefix, bucket) <> (${prefix}, ${bucket}) returning 1
              )
              select (select count(*) from w)::int as written, (select count(*) from n)::int as announced, (select count(*) from d)::int as swept`;
      written = row!.written === 1;
    } catch (err) {
      if (!isConnectionError(err)) throw err;
      // The answer was lost, perhaps not the write: the row says whether it took place.
      const fresh = await this.readRow(bucket);
      return fresh.writtenBy === writtenBy ? undefined : fresh.read;
    }
    return written ? undefined : this.read(bucket);
  }

  /** The bucket's row (none: version 0) and the server's clock; after a dropped connection, again on a new one. */
  private async readRow(bucket: string): Promise<{ read: VersionedRead; writtenBy: string }> {
    const { prefix } = this.options;
    const [row] = await withReconnect(() => {
      // Closed: no reconnecting.
      if (this.closed) throw new Error('the budget store is closed');
      return this.sql<Row[]>`
        select (extract(epoch from c.t) * 1000)::float8 as now_ms, coalesce(r.version, 0)::text as version,
               case when r.expires_at > c.t then r.record::text else '' end as record, coalesce(r.written_by, '') as written_by
          from (select clock_timestamp() as t) c
          left join sync.rate_budgets r on r.prefix = ${prefix} and r.bucket = ${bucket}`;
    });
    return { read: { version: Number(row!.version), serialized: row!.record, nowMs: Math.floor(row!.now_ms) }, writtenBy: row!.written_by };
  }
}

/** The channel a budget's changes are announced on: named after its prefix, or a hash of a long one. */
export function budgetChannel(prefix: string): string {
  const named = `tesync_budget:${prefix}`;
  if (Buffer.byteLength(named) <= MAX_CHANNEL_BYTES) return named;
  return `tesync_budget:${createHash('sha256').update(prefix).digest('hex').slice(0, 32)}`;
}
