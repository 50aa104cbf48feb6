// The checks of `tesync status --max-age / --max-unconfirmed` and of the status page's
// thresholds: which groups are over, judged resource by resource, and why, in words that name
// the resource (and its token) that lags, how old it is, by which clock. Pure.
import { age, ago, utc } from '../../lib/ages.ts';
import { belowCoverage, coverageText, missingText } from './coverage.ts';
import type { DataTimeKind, FailureCount, GroupStatus, OldestData } from './status.ts';

/** Why a group fails a check, for people and for --json. */
export interface OverLimit {
  source: string;
  group: string;
  /** The time judged (`clock` in --json): a data time, or a known time (when tesync confirmed the data). */
  clock: DataTimeKind | 'last confirmed' | 'least recently confirmed' | 'coverage';
  at: Date | null;
  ageHours: number | null;
  /** The resource judged (`token/<slug>/history`), and its token; null when a group as a whole was. */
  resource: string | null;
  token: string | null;
  reason: string;
}

const hoursSince = (at: Date, now: Date) => (now.getTime() - at.getTime()) / 3600_000;
/** How a reason names the limit it was judged against: `more than --max-age 24h` for the command's flags. */
export type LimitText = (hours: number) => string;
const flagLimit = (option: string): LimitText => (hours) => `more than ${option} ${hours}h`;

/** Pure: whose data it is, for a reason: the token (and the resource, when the token has several of the group). */
export function dataOf(group: string, d: Pick<OldestData, 'resource' | 'token'>): string {
  if (d.token) return d.resource === `token/${d.token}/${group}` ? `data of token ${d.token}` : `data of token ${d.token} (${d.resource})`;
  return d.resource === group ? 'data' : `data of ${d.resource}`;
}

/**
 * Groups whose oldest judged data is older than `maxAgeHours` by the data's own clock. A
 * group with nothing to judge (every resource delisted, not found or skipped) passes. Pure.
 */
export function overMaxAge(groups: GroupStatus[], now: Date, maxAgeHours: number, limitText: LimitText = flagLimit('--max-age')): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const name = `${g.source}.${g.group}`;
    const { oldestData: d, leastConfirmed: c, checked } = g.checks;
    if (checked === 0) continue;
    if (d) {
      const h = hoursSince(d.at, now);
      if (h <= maxAgeHours) continue;
      const verdict = g.freshness ? `upstream says ${g.freshness}` : 'upstream gives no freshness verdict';
      const what = d.clock === 'newest history point' ? 'its newest history point' : "upstream's asOf";
      out.push({
        source: g.source,
        group: g.group,
        clock: d.clock,
        at: d.at,
        ageHours: h,
        resource: d.resource,
        token: d.token,
        reason: `${name}: ${dataOf(g.group, d)} is ${age(d.at, now)} old by ${what}, ${utc(d.at)} (${limitText(maxAgeHours)}); ${verdict}; tesync last confirmed it ${ago(d.confirmedAt, now)}`,
      });
    } else if (c) {
      // No data time to judge (the OpenAPI document): how long since tesync last had it confirmed.
      const h = c.at ? hoursSince(c.at, now) : null;
      if (h !== null && h <= maxAgeHours) continue;
      const whose = c.resource === g.group ? 'it' : c.resource;
      out.push({
        source: g.source,
        group: g.group,
        clock: 'last confirmed',
        at: c.at,
        ageHours: h,
        resource: c.resource,
        token: c.token,
        reason: `${name}: upstream gives no data time; judged by when tesync last confirmed ${whose}: ${c.at ? `${age(c.at, now)} ago` : 'never'} (${limitText(maxAgeHours)})`,
      });
    }
  }
  return out;
}

/** Groups with a judged resource tesync has not confirmed within `hours`, or never; names it. Pure. */
export function overMaxUnconfirmed(groups: GroupStatus[], now: Date, hours: number, limitText: LimitText = flagLimit('--max-unconfirmed')): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const { leastConfirmed: c, neverConfirmed, checked } = g.checks;
    if (!c || checked === 0) continue;
    const h = c.at ? hoursSince(c.at, now) : null;
    if (neverConfirmed === 0 && h !== null && h <= hours) continue;
    const why =
      neverConfirmed > 0
        ? `never confirmed by tesync: ${c.resource}${neverConfirmed > 1 ? ` and ${neverConfirmed - 1} more` : ''} (${neverConfirmed} of ${checked} resources)`
        : `${c.resource}, the least recently confirmed resource, was confirmed by tesync ${age(c.at, now)} ago (${limitText(hours)})`;
    out.push({ source: g.source, group: g.group, clock: 'least recently confirmed', at: c.at, ageHours: h, resource: c.resource, token: c.token, reason: `${g.source}.${g.group}: ${why}` });
  }
  return out;
}

/**
 * Groups holding less than `minPct` of what their lists promise, naming what is missing. With
 * no `minPct`, `fallbackPct` (TE_MIN_COVERAGE) for each group a walk has ended since its lists last changed (an
 * interrupted one too: what it did not reach is missing), and no check while the walk that
 * changed them is under way. Pure.
 */
export function belowMinCoverage(
  groups: GroupStatus[],
  minPct: number | undefined,
  fallbackPct = 100,
  limitText: (pct: number) => string = (pct) => `less than --min-coverage ${pct}`,
): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const c = g.coverage;
    if (!c) continue;
    const min = minPct ?? (c.walkedSince ? fallbackPct : undefined);
    if (min === undefined || !belowCoverage(c, min)) continue;
    const first = c.missingNamed[0];
    out.push({
      source: g.source,
      group: g.group,
      clock: 'coverage',
      at: null,
      ageHours: null,
      resource: first?.resource ?? null,
      token: first ? tokenOf(first.resource) : null,
      reason: `${g.source}.${g.group}: holds ${coverageText(c)} of what its lists promise (${limitText(min)}); missing: ${missingText(c)}`,
    });
  }
  return out;
}

const tokenOf = (resource: string): string | null => (resource.startsWith('token/') ? (resource.split('/')[1] ?? null) : null);

/** `3 failed ProblemError 401 unauthorized`: the count, then what the failure columns say. */
export function formatCause(c: FailureCount): string {
  return `${c.resources} ${c.status} ${causeText(c)}`;
}

/** `ProblemError 401 unauthorized`: what the failure columns say, without the count. */
export function causeText(c: Omit<FailureCount, 'resources' | 'status'>): string {
  return [c.type ?? 'unknown error', c.httpStatus === null ? null : String(c.httpStatus), c.code].filter((x) => x !== null).join(' ');
}
