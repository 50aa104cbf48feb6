// The status page's view model: what the page shows, as plain strings and flags, built from
// what was read (PageData) by pure functions. The renderer (page-html.ts) only lays it out and
// escapes it; the same model is served as JSON at /status.json.
import { age, ago, duration, minute, second } from '../../lib/ages.ts';
import { readWalkFailure } from '../../ports/run-ledger.ts';
import type { FailingResource } from '../../store/read/failure-bodies.ts';
import type { GroupStatus } from '../../store/read/status.ts';
import { coverageText } from '../../store/read/coverage.ts';
import { belowMinCoverage, causeText, overMaxAge, overMaxUnconfirmed } from '../../store/read/status-checks.ts';
import type { BucketWindow, RunRow, TimelineEvent } from '../../store/read/status-page.ts';
import type { BucketStatus } from '../../upstream/budget/budget-state.ts';
import type { GroupThreshold } from './page-thresholds.ts';
import type { QueuesView } from './page-queues.ts';
import type { NotificationsRead } from '../../store/read/notifications.ts';
import { notificationsModel, type NotificationsModel } from './page-notifications.ts';

export interface PageData {
  now: Date;
  /** The warehouse as `tesync status` names it (never a password). */
  warehouse: string;
  /** Who serves the page: `tesync worker <name>`, `tesync status --serve`. */
  servedBy: string;
  refreshSeconds: number;
  groups: GroupStatus[];
  thresholds: (group: string) => GroupThreshold;
  runs: RunRow[];
  events: TimelineEvent[];
  budget: { buckets: BucketStatus[]; note: string | null };
  /** sync.requests per bucket over WINDOW_MS. */
  windows: BucketWindow[];
  failing: { resources: FailingResource[]; total: number };
  /** Null: not served by a worker, or not readable (then `queuesNote` says why). */
  queues: QueuesView | null;
  queuesNote: string | null;
  /** Null when they could not be read (then `notificationsNote` says why). */
  notifications: NotificationsRead | null;
  notificationsNote: string | null;
  /** The endpoints this process delivers to, by label (never a URL). */
  notifyEndpoints: readonly string[];
}

/** The request log's window the budget section counts over. */
export const WINDOW_MS = 3600_000;

export type Tone = 'ok' | 'warn' | 'bad' | 'idle';

export interface GroupRow {
  name: string;
  tone: Tone;
  state: string;
  resources: number;
  dataTime: string;
  dataAge: string;
  dataLimit: string;
  dataOver: boolean;
  verdict: string;
  confirmed: string;
  confirmedLimit: string;
  confirmedOver: boolean;
  /** Held of what its lists promise (`47/200 (23.5%)`), `-` where nothing is promised. */
  coverage: string;
  coverageOver: boolean;
  statuses: string;
  /** The resource whose data is oldest (`token/<slug>/...`: its token): the one that lags. */
  lagging: string | null;
  /** Why the group is overdue, one sentence per check failed. */
  reasons: string[];
  basis: string;
  lastError: string | null;
}

export interface TimelineItem {
  kind: 'run' | 'contract' | 'binding';
  at: string;
  ago: string;
  tone: Tone;
  title: string;
  /** Run figures, as label → value. */
  figures: [string, string][];
  details: string[];
  id: string | null;
}

export interface BucketRow {
  bucket: string;
  tone: Tone;
  mode: string;
  remaining: string;
  meter: { value: number; max: number } | null;
  inFlight: number;
  held: string | null;
  window: { requests: number; tooMany: number; retryAfters: string; failed: number; lastSeen: string };
}

export interface FailureItem {
  resource: string;
  group: string;
  error: string | null;
  attempted: string;
  failures: number;
  bodyHref: string | null;
  bodyNote: string;
}

export interface CauseGroup {
  cause: string;
  status: string;
  tone: Tone;
  count: number;
  items: FailureItem[];
}

export interface QueuesModel {
  where: string;
  workers: string;
  queues: { name: string; paused: boolean; counts: [string, number][] }[];
  schedules: { id: string; pattern: string; next: string }[];
}

export interface PageModel {
  title: string;
  warehouse: string;
  servedBy: string;
  generatedAt: string;
  refreshSeconds: number;
  summary: { label: string; value: string; tone: Tone }[];
  groups: GroupRow[];
  timeline: TimelineItem[];
  buckets: BucketRow[];
  budgetNote: string | null;
  causes: CauseGroup[];
  failingTotal: number;
  failingShown: number;
  queues: QueuesModel | null;
  queuesNote: string | null;
  notifications: NotificationsModel | null;
  notificationsNote: string | null;
}

const hoursText = (h: number | null) => (h === null ? 'not judged' : `${Number.isInteger(h) ? h : h.toFixed(1)}h`);

/** Pure: the page's model. */
export function buildPageModel(d: PageData): PageModel {
  const groups = d.groups.map((g) => groupRow(g, d.thresholds(g.group), d.now));
  const overdue = groups.filter((g) => g.dataOver || g.confirmedOver).length;
  const short = groups.filter((g) => g.coverageOver).length;
  const lastRun = d.runs[0];
  return {
    title: 'tesync status',
    warehouse: d.warehouse,
    servedBy: d.servedBy,
    generatedAt: `${second(d.now)} UTC`,
    refreshSeconds: d.refreshSeconds,
    summary: [
      { label: 'groups', value: String(groups.length), tone: 'idle' },
      { label: 'overdue', value: String(overdue), tone: overdue > 0 ? 'bad' : 'ok' },
      { label: 'incomplete', value: String(short), tone: short > 0 ? 'bad' : 'ok' },
      { label: 'failing resources', value: String(d.failing.total), tone: d.failing.total > 0 ? 'warn' : 'ok' },
      { label: 'last run', value: lastRun ? `${lastRun.status}, ${ago(lastRun.startedAt, d.now)}` : 'none yet', tone: lastRun ? runTone(lastRun.status) : 'idle' },
    ],
    groups,
    timeline: timeline(d.runs, d.events, d.now),
    buckets: bucketRows(d.budget.buckets, d.windows, d.now),
    budgetNote: d.budget.note,
    causes: causeGroups(d.failing.resources, d.now),
    failingTotal: d.failing.total,
    failingShown: d.failing.resources.length,
    queues: d.queues ? queuesModel(d.queues, d.now) : null,
    queuesNote: d.queuesNote,
    notifications: d.notifications ? notificationsModel(d.notifications, d.notifyEndpoints, d.warehouse, d.now) : null,
    notificationsNote: d.notificationsNote,
  };
}

function groupRow(g: GroupStatus, t: GroupThreshold, now: Date): GroupRow {
  const text = (h: number) => `more than its threshold of ${hoursText(h)}`;
  const ageOver = t.maxAgeHours === null ? [] : overMaxAge([g], now, t.maxAgeHours, text);
  const unconfirmed = t.maxUnconfirmedHours === null ? [] : overMaxUnconfirmed([g], now, t.maxUnconfirmedHours, text);
  // Below its minimum, a group is not on time: once a walk of it has ended since its lists
  // changed something is missing (an interrupted walk's part); before, a walk is filling it.
  const short = belowMinCoverage([g], t.minCoveragePct, undefined, (pct) => `less than its minimum of ${pct}%`);
  const filling = short.length > 0 && g.coverage?.walkedSince === false;
  const c = g.checks;
  const d = c.oldestData;
  const failing = g.failing > 0;
  const over = ageOver.length + unconfirmed.length > 0;
  const incomplete = short.length > 0 && !filling;
  const idle = c.checked === 0 && short.length === 0;
  const never = c.neverConfirmed > 0 ? `, ${c.neverConfirmed} never` : '';
  const statuses = Object.entries(g.statuses)
    .sort()
    .map(([s, n]) => `${s} ${n}`);
  if (c.delisted > 0) statuses.push(`${c.delisted} delisted`);
  if (c.retired > 0) statuses.push(`${c.retired} no longer listed`);
  return {
    name: `${g.source}.${g.group}`,
    tone: over || incomplete ? 'bad' : failing || filling ? 'warn' : idle ? 'idle' : 'ok',
    state: over ? 'overdue' : incomplete ? 'incomplete' : filling ? 'walk under way' : failing ? 'failing' : idle ? 'not judged' : 'on time',
    resources: g.resources,
    dataTime: d ? `${minute(d.at)}${d.clock === 'newest history point' ? ' (newest point)' : ''}` : '-',
    dataAge: d ? age(d.at, now) : '-',
    dataLimit: hoursText(t.maxAgeHours),
    dataOver: ageOver.length > 0,
    verdict: g.freshness ?? '-',
    confirmed: idle ? '-' : c.stalestConfirmedAt ? `${ago(c.stalestConfirmedAt, now)}${never}` : `never${never ? ` (${c.neverConfirmed})` : ''}`,
    confirmedLimit: hoursText(t.maxUnconfirmedHours),
    confirmedOver: unconfirmed.length > 0,
    coverage: g.coverage ? coverageText(g.coverage) : '-',
    coverageOver: short.length > 0,
    statuses: statuses.join(', '),
    lagging: d ? d.resource : null,
    // The row names the group: each reason without its `source.group: ` lead.
    reasons: [...ageOver, ...unconfirmed, ...short].map((o) => (o.reason.startsWith(`${g.source}.${g.group}: `) ? o.reason.slice(g.source.length + g.group.length + 3) : o.reason)),
    basis: t.basis,
    lastError: g.lastError,
  };
}

export function runTone(status: string): Tone {
  if (status === 'succeeded') return 'ok';
  if (status === 'partial' || status === 'running' || status === 'interrupted') return 'warn';
  if (status === 'failed') return 'bad';
  return 'idle';
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function runItem(r: RunRow, now: Date): TimelineItem {
  const stats = (typeof r.stats === 'object' && r.stats !== null ? r.stats : {}) as Record<string, unknown>;
  const end = r.finishedAt ?? now;
  const figures: [string, string][] = [
    ['duration', `${duration(end.getTime() - r.startedAt.getTime())}${r.finishedAt ? '' : ' so far'}`],
    ['requests', r.requests.toLocaleString('en-US')],
  ];
  const rows = num(stats.rows);
  // Every row written is a version: a new one, or one that replaced the version before it (kept in its table's _history).
  if (rows !== null) figures.push(['rows written (versions)', rows.toLocaleString('en-US')]);
  const done = num(stats.done);
  const planned = num(stats.planned);
  if (done !== null) figures.push(['resources', `${done}${planned !== null ? ` of ${planned}` : ''} done`]);
  const failed = num(stats.failed);
  if (failed !== null && failed > 0) figures.push(['failed', String(failed)]);
  const tables = Array.isArray(stats.tables) ? stats.tables.length : null;
  if (tables !== null) figures.push(['tables exported', String(tables)]);
  const failures = Array.isArray(stats.failures) ? stats.failures.map(readWalkFailure) : [];
  const details = failures.slice(0, 5).map((f) => `${f.resource}: ${[f.status, f.type, f.httpStatus, f.code].filter((x) => x !== undefined).join(' ')}`);
  if (failures.length > 5) details.push(`and ${failures.length - 5} more`);
  if (r.error) details.unshift(r.error);
  const what = r.schedule ? `${r.trigger} (${r.schedule})` : r.trigger;
  return {
    kind: 'run',
    at: `${second(r.startedAt)} UTC`,
    ago: ago(r.startedAt, now),
    tone: runTone(r.status),
    title: `run ${r.status}: ${what}${r.sources.length > 0 ? `, ${r.sources.join(' + ')}` : ''}`,
    figures,
    details,
    id: r.id,
  };
}

function eventItem(e: TimelineEvent, now: Date): TimelineItem {
  const base = { at: `${second(e.at)} UTC`, ago: ago(e.at, now), figures: [] as [string, string][], id: null };
  if (e.kind === 'binding') {
    const title = e.event === 'rebound' ? `${e.source} rebound to another upstream` : `${e.source} ${e.event}`;
    const details = [`${e.fromUpstream ? `${e.fromUpstream} → ` : ''}${e.toUpstream}`, `by tesync ${e.command}${e.host ? ` on ${e.host}` : ''}`];
    return { ...base, kind: 'binding', tone: e.event === 'rebound' ? 'warn' : 'idle', title, details };
  }
  const list = (label: string, xs: string[]) => (xs.length === 0 ? [] : [`${label}: ${xs.slice(0, 12).join(', ')}${xs.length > 12 ? ` and ${xs.length - 12} more` : ''}`]);
  const title = e.change === 'openapi' ? `${e.source} contract changed: ${e.path ?? 'OpenAPI document'}` : `${e.source} fields changed on ${e.resourceKind ?? 'a resource'}`;
  const details = [...list('fields added', e.addedFields), ...list('fields removed', e.removedFields), ...list('paths added', e.addedPaths), ...list('paths removed', e.removedPaths)];
  return { ...base, kind: 'contract', tone: 'warn', title, details };
}

/** Runs and events, newest first. */
function timeline(runs: readonly RunRow[], events: readonly TimelineEvent[], now: Date): TimelineItem[] {
  const items = [...runs.map((r) => ({ t: r.startedAt.getTime(), item: runItem(r, now) })), ...events.map((e) => ({ t: e.at.getTime(), item: eventItem(e, now) }))];
  return items.sort((a, b) => b.t - a.t).map((x) => x.item);
}

function bucketRows(now: readonly BucketStatus[], windows: readonly BucketWindow[], at: Date): BucketRow[] {
  const names = [...new Set([...now.map((b) => b.bucket), ...windows.map((w) => w.bucket)])];
  return names.map((bucket) => {
    const b = now.find((x) => x.bucket === bucket);
    const w = windows.find((x) => x.bucket === bucket);
    const limit = b?.limit ?? w?.limit ?? null;
    const remaining = b?.remaining ?? null;
    const heldUntil = b?.waitingUntilMs !== undefined && b.waitingUntilMs > at.getTime() ? new Date(b.waitingUntilMs) : null;
    const held = b?.reason ? `${b.reason}${heldUntil ? ` until ${second(heldUntil)} UTC (${duration(heldUntil.getTime() - at.getTime())})` : ''}` : null;
    const tooMany = w?.tooMany ?? 0;
    return {
      bucket,
      tone: heldUntil || tooMany > 0 ? 'warn' : b?.mode === 'unknown' && !w ? 'idle' : 'ok',
      mode: b?.mode ?? 'not shared here',
      remaining: remaining === null ? (w?.remaining !== null && w?.remaining !== undefined ? `${w.remaining} (last answer)` : '-') : `${remaining}${limit !== null ? ` of ${limit}` : ''}`,
      meter: remaining !== null && limit !== null && limit > 0 ? { value: Math.min(remaining, limit), max: limit } : null,
      inFlight: b?.inFlight ?? 0,
      held,
      window: {
        requests: w?.requests ?? 0,
        tooMany,
        retryAfters: w && w.retryAfters > 0 ? `${w.retryAfters} (${duration(w.retryAfterMs)} in all, longest ${duration(w.longestRetryAfterMs ?? 0)})` : '0',
        failed: w?.failed ?? 0,
        lastSeen: w?.lastAt ? ago(w.lastAt, at) : 'none',
      },
    };
  });
}

/** Failing resources grouped by cause (status, error class, HTTP status, problem code), the largest group first. */
function causeGroups(resources: readonly FailingResource[], now: Date): CauseGroup[] {
  const groups = new Map<string, CauseGroup>();
  for (const r of resources) {
    const cause = causeText({ type: r.type, httpStatus: r.httpStatus, code: r.code });
    const key = `${r.status}\u0000${cause}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { cause, status: r.status, tone: r.status === 'rate_limited' ? 'warn' : 'bad', count: 0, items: [] }));
    g.count++;
    g.items.push({
      resource: `${r.source}: ${r.resource}`,
      group: `${r.source}.${r.group}`,
      error: r.lastError,
      attempted: ago(r.lastAttemptAt, now),
      failures: r.consecutiveFailures,
      bodyHref: r.bodyId === null ? null : `/body/${r.bodyId}`,
      bodyNote: r.bodyId !== null ? 'archived body' : r.status === 'invalid' ? 'body kept, not linked (see sync.raw_responses)' : 'no body kept (no answer, or a 5xx or 429)',
    });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

function queuesModel(q: QueuesView, now: Date): QueuesModel {
  return {
    where: `${q.where}, prefix ${q.prefix}`,
    workers: q.workers === null ? 'unknown' : String(q.workers),
    queues: q.queues.map((x) => ({ name: x.name, paused: x.paused, counts: Object.entries(x.counts) })),
    schedules: q.schedules.map((s) => ({
      id: s.id,
      pattern: `${s.pattern ?? '-'}${s.tz && s.tz !== 'UTC' ? ` (${s.tz})` : ''}`,
      next: s.next ? `${second(s.next)} UTC (${s.next.getTime() >= now.getTime() ? `in ${age(now, s.next)}` : `${age(s.next, now)} late`})` : '-',
    })),
  };
}
