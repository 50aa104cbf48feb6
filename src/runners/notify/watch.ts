// The one place the changes only a read can see are judged, at a run's end (`tesync sync`) and
// on a worker's tick: each group overdue or on time (the status page's thresholds), its
// coverage below its minimum or held again, each bucket held by a long Retry-After or free,
// each worker alive or lost. Each judgement is a subject's state for sync.notify_transition,
// which tells only a change, once, however many processes judge it at once.
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import { errorLine } from '../../lib/recordable.ts';
import { findLostWorkers, heartbeat, heldBuckets, tellTransition, type Transition } from '../../store/books/notifications.ts';
import type { Warehouse } from '../../store/connection.ts';
import { belowCoverage, coverageText, missingText } from '../../store/read/coverage.ts';
import { readGroups, type GroupStatus } from '../../store/read/status.ts';
import { overMaxAge, overMaxUnconfirmed } from '../../store/read/status-checks.ts';
import { WarehouseClock } from '../../store/warehouse-clock.ts';
import { BUCKETS } from '../../upstream/routes.ts';
import { pageThresholds, type GroupThreshold } from '../metrics/page-thresholds.ts';

/** A worker not seen for this long is lost: several ticks missed, not one slow one. */
export const WORKER_LOST_AFTER_MS = 5 * 60_000;

export interface WatchOptions {
  warehouse: Warehouse;
  config: Pick<Config, 'schedules' | 'scheduleTz' | 'exportDir' | 'minCoverage' | 'notify'>;
  logger: Logger;
  /** A worker judging: its heartbeat goes first, and it looks for lost workers. */
  worker?: { name: string; figures: Record<string, unknown> };
}

/** Judges everything once; returns how many events it told. Never throws. */
export async function watch(o: WatchOptions): Promise<number> {
  try {
    const w = o.warehouse;
    if (o.worker) await heartbeat(w, o.worker.name, o.worker.figures);
    const now = await WarehouseClock.read(w.db);
    const thresholds = pageThresholds(o.config, now.getTime());
    const judged: Transition[] = [];
    for (const g of await readGroups(w)) judged.push(...groupTransitions(g, thresholds(g.group), now));
    const held = await heldBuckets(w, o.config.notify.holdMinutes * 60_000);
    for (const bucket of BUCKETS) judged.push(bucketTransition(bucket, held.find((h) => h.bucket === bucket)));
    let told = 0;
    for (const t of judged) if ((await tellTransition(w, t)) !== null) told++;
    if (o.worker) told += await findLostWorkers(w, WORKER_LOST_AFTER_MS);
    return told;
  } catch (err) {
    o.logger.warn({ err: errorLine(err) }, 'notifications: could not judge the groups, buckets and workers; the next round does');
    return 0;
  }
}

const hours = (h: number | null) => (h === null ? null : Math.round(h * 10) / 10);

/** Pure: a group's freshness and, once a walk of it has ended since its lists changed, its coverage. */
export function groupTransitions(g: GroupStatus, t: GroupThreshold, now: Date): Transition[] {
  const name = `${g.source}.${g.group}`;
  const text = (h: number) => `more than its threshold of ${hours(h)}h`;
  const over = [
    ...(t.maxAgeHours === null ? [] : overMaxAge([g], now, t.maxAgeHours, text)),
    ...(t.maxUnconfirmedHours === null ? [] : overMaxUnconfirmed([g], now, t.maxUnconfirmedHours, text)),
  ];
  const d = g.checks.oldestData;
  const out: Transition[] = [
    {
      subject: `overdue:${name}`,
      state: over.length > 0 ? 'overdue' : 'on_time',
      quiet: 'on_time',
      types: { overdue: 'custom_group_overdue', on_time: 'custom_group_on_time' },
      source: g.source,
      group: g.group,
      figures: {
        reason: over.map((o) => (o.reason.startsWith(`${name}: `) ? o.reason.slice(name.length + 2) : o.reason)).join('; ') || null,
        resource: over[0]?.resource ?? d?.resource ?? null,
        data_time: d?.at.toISOString() ?? null,
        age_hours: d ? hours((now.getTime() - d.at.getTime()) / 3600_000) : null,
        max_age_hours: hours(t.maxAgeHours),
        max_unconfirmed_hours: hours(t.maxUnconfirmedHours),
        thresholds: t.basis,
      },
    },
  ];
  const c = g.coverage;
  // While the walk that changed its lists runs, a group is being filled, not short.
  if (c && c.walkedSince) {
    const short = belowCoverage(c, t.minCoveragePct);
    out.push({
      subject: `coverage:${name}`,
      state: short ? 'below' : 'held',
      quiet: 'held',
      types: { below: 'custom_coverage_below', held: 'custom_coverage_restored' },
      source: g.source,
      group: g.group,
      figures: { held: coverageText(c), expected: c.expected, covered: c.covered, missing_count: c.missing, min_pct: t.minCoveragePct, missing: c.missing > 0 ? missingText(c) : null },
    });
  }
  return out;
}

/** Pure: a bucket held by a Retry-After longer than TE_NOTIFY_HOLD_MINUTES, or free. */
export function bucketTransition(bucket: string, hold: { retryAfterMs: number; until: Date } | undefined): Transition {
  return {
    subject: `bucket:${bucket}`,
    state: hold ? 'held' : 'free',
    quiet: 'free',
    types: { held: 'custom_bucket_held', free: 'custom_bucket_released' },
    figures: { bucket, ...(hold ? { retry_after_ms: hold.retryAfterMs, until: hold.until.toISOString() } : {}) },
  };
}
