// Retention of sync.requests, the log of every upstream attempt: rows older than
// TE_REQUESTS_RETENTION_DAYS are removed as runs end (finishRun, so both runners). The raw
// archive and the history tables are never removed: they are the provenance of every value.
//
// Cost. A guard first: the oldest row, one probe of requests_started_at_idx; when nothing is
// older than the cutoff (the common case for the many small walks of `tesync worker`) that is
// all. Otherwise rows go in batches of a few thousand, oldest first, each its own statement, so
// no lock is held for more than a batch and inserts of running walks never wait; batches stop
// after a time budget, and what is left goes at the next run's end (the first run after an
// upgrade on a table of millions of rows does not hold its process for minutes). Rows locked
// by another process removing the same rows are skipped, not waited for.
import { sql } from 'drizzle-orm';
import type { Logger } from '../../lib/logger.ts';
import { rowsOf, type Db } from '../connection.ts';
import { WarehouseClock } from '../warehouse-clock.ts';

export interface RequestsRetention {
  /** Days kept; 0: forever. */
  days: number;
  /** Now (tests); by default the warehouse's clock, which stamped `started_at`: a process whose own clock is days ahead removes nothing early. */
  now?: Date;
  /** Rows per statement. */
  batchRows?: number;
  /** No new batch starts after this long; the rest goes at the next run's end. */
  timeBudgetMs?: number;
}

export interface RetentionOutcome {
  removed: number;
  /** Rows older than the cutoff may remain (the time budget ran out). */
  more: boolean;
  cutoff: Date | null;
}

const DAY_MS = 86_400_000;
export const RETENTION_BATCH_ROWS = 5000;
export const RETENTION_TIME_BUDGET_MS = 10_000;

/** Pure: the instant before which requests are removed; null when they are kept forever. */
export function requestsCutoff(days: number, now: Date): Date | null {
  return days > 0 ? new Date(now.getTime() - days * DAY_MS) : null;
}

/** Removes sync.requests rows started before the cutoff, in bounded batches. */
export async function removeOldRequests(db: Db, r: RequestsRetention): Promise<RetentionOutcome> {
  if (r.days <= 0) return { removed: 0, more: false, cutoff: null };
  const cutoff = requestsCutoff(r.days, r.now ?? (await WarehouseClock.read(db)));
  if (!cutoff) return { removed: 0, more: false, cutoff };
  const batch = r.batchRows ?? RETENTION_BATCH_ROWS;
  const deadline = Date.now() + (r.timeBudgetMs ?? RETENTION_TIME_BUDGET_MS);
  const iso = cutoff.toISOString();
  // min() over the index reads one end of it, whatever the table's size (an `exists` with a
  // range could be planned as a scan of the whole table when nothing matches).
  const [oldest] = rowsOf<{ at: string | Date | null }>(await db.execute(sql`select min(started_at) as at from sync.requests`));
  if (!oldest?.at || new Date(oldest.at).getTime() >= cutoff.getTime()) return { removed: 0, more: false, cutoff };
  let removed = 0;
  for (;;) {
    const [row] = rowsOf<{ n: number | string }>(
      await db.execute(sql`
        with gone as (
          delete from sync.requests where id in (
            select id from sync.requests where started_at < ${iso}::timestamptz
            order by started_at limit ${batch} for update skip locked)
          returning 1)
        select count(*)::int as n from gone`),
    );
    const n = Number(row?.n ?? 0);
    removed += n;
    if (n < batch) return { removed, more: false, cutoff };
    if (Date.now() >= deadline) return { removed, more: true, cutoff };
  }
}

/** What finishRun needs to apply retention: the setting and where to say what it removed. */
export interface Housekeeping {
  requestsRetentionDays: number;
  logger: Logger;
}

/** Applies retention and logs what it removed; never throws (housekeeping must not fail a run). */
export async function applyRetention(db: Db, h: Housekeeping, options: Omit<RequestsRetention, 'days'> = {}): Promise<RetentionOutcome | undefined> {
  try {
    const out = await removeOldRequests(db, { ...options, days: h.requestsRetentionDays });
    if (out.removed > 0) {
      h.logger.info(
        { table: 'sync.requests', removed: out.removed, olderThan: out.cutoff?.toISOString(), retentionDays: h.requestsRetentionDays, more: out.more },
        `removed ${out.removed} request rows older than ${h.requestsRetentionDays} days (TE_REQUESTS_RETENTION_DAYS)${out.more ? '; more remain, removed at the next run' : ''}`,
      );
    }
    return out;
  } catch (err) {
    h.logger.warn({ err, table: 'sync.requests' }, 'could not apply TE_REQUESTS_RETENTION_DAYS; retried at the next run');
    return undefined;
  }
}
