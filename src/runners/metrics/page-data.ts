// What the status page reads, each time it is asked for: `tesync status`'s groups (the same
// store reads), the runs and events, the request log of the last hour, the failing resources,
// the rate budget now and, on a worker, the queues. A part that cannot be read says why in
// its place rather than failing the page. The parts are read one after another: a read of the
// page holds one of the pool's connections at a time, whatever the workers' jobs and /metrics
// need of the others.
import type { Warehouse } from '../../store/connection.ts';
import { readFailingResources } from '../../store/read/failure-bodies.ts';
import { readGroups } from '../../store/read/status.ts';
import { readNotifications } from '../../store/read/notifications.ts';
import { readBucketWindows, readRunTimeline, readTimelineEvents } from '../../store/read/status-page.ts';
import { WarehouseClock } from '../../store/warehouse-clock.ts';
import { healthCause } from './server.ts';
import type { BudgetNow } from './page-budget.ts';
import { WINDOW_MS, type PageData } from './page-model.ts';
import type { QueuesView } from './page-queues.ts';
import type { GroupThreshold } from './page-thresholds.ts';

export interface PageSources {
  warehouse: Warehouse;
  /** `tesync worker <name>`, `tesync status --serve`. */
  servedBy: string;
  /** Seconds between the page's refreshes of itself. */
  refreshSeconds: number;
  /** Each group's thresholds, as of `nowMs` (a schedule's next rounds). */
  thresholds(nowMs: number): (group: string) => GroupThreshold;
  budget(): Promise<BudgetNow>;
  /** Absent where no worker serves the page. */
  queues?: () => Promise<QueuesView>;
  /** TE_NOTIFY_URL's endpoints, by label. */
  notifyEndpoints?: readonly string[];
  now?: () => Date;
}

/** How often the page refreshes itself. */
export const PAGE_REFRESH_SECONDS = 15;
/** Runs on the page, newest first. */
export const RUNS_SHOWN = 15;
/** Notifications listed, the last told (and as many dead ones at most). */
export const NOTIFICATIONS_SHOWN = 15;
/** Failing resources listed (the most recently tried); the rest are counted. */
export const FAILING_SHOWN = 100;
/** Events looked at before the oldest run shown, when there are runs; else this far back. */
const EVENTS_BACK_MS = 30 * 24 * 3600_000;

export async function readPageData(s: PageSources): Promise<PageData> {
  // Ages on the page are judged on the warehouse's clock, as every stored time is.
  const now = s.now?.() ?? (await WarehouseClock.read(s.warehouse.db));
  const w = s.warehouse;
  const groups = await readGroups(w);
  const runs = await readRunTimeline(w, RUNS_SHOWN);
  const windows = await readBucketWindows(w, new Date(now.getTime() - WINDOW_MS));
  const failing = await readFailingResources(w, FAILING_SHOWN);
  const budget = await s.budget().catch((err: unknown): BudgetNow => ({ buckets: [], note: `the shared rate budget could not be read: ${healthCause(err)}` }));
  const queues = s.queues
    ? await s.queues().then(
        (q) => ({ view: q, note: null }),
        (err: unknown) => ({ view: null, note: `the queues could not be read: ${healthCause(err)}` }),
      )
    : { view: null, note: null };
  // The events of the period the runs shown cover (all of them while fewer runs than shown exist).
  const oldest = runs.length === RUNS_SHOWN ? runs[runs.length - 1]!.startedAt : new Date(now.getTime() - EVENTS_BACK_MS);
  const events = await readTimelineEvents(w, oldest, 50);
  const notifications = await readNotifications(w, NOTIFICATIONS_SHOWN).then(
    (n) => ({ read: n, note: null }),
    (err: unknown) => ({ read: null, note: `the notifications could not be read: ${healthCause(err)}` }),
  );
  return {
    now,
    warehouse: s.warehouse.location,
    servedBy: s.servedBy,
    refreshSeconds: s.refreshSeconds,
    groups,
    thresholds: s.thresholds(now.getTime()),
    runs,
    events,
    budget,
    windows,
    failing,
    queues: queues.view,
    queuesNote: queues.note ?? (s.queues ? null : 'Served without a worker (tesync status --serve): a worker\'s own page shows the queues.'),
    notifications: notifications.read,
    notificationsNote: notifications.note,
    notifyEndpoints: s.notifyEndpoints ?? [],
  };
}
