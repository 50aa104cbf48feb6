// Coverage per source and group, as the warehouse computes it (analytics.coverage and
// analytics.coverage_resources, src/schema/warehouse/coverage.ts): what the lists promise,
// what is held, and the first missing resources by name. Read by `tesync status`, the status
// page, /metrics and the notifications' watch.
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';

/** A resource promised and not held, and why, in words (`never fetched`). */
export interface MissingResource {
  resource: string;
  why: string;
}

export interface GroupCoverage {
  /** Resources its lists promise and upstream offers. */
  expected: number;
  /** Of those, the ones the warehouse holds. */
  covered: number;
  missing: number;
  /** Promised, but excused by upstream or the configuration (not_found, skipped, declined to the key). */
  notOffered: number;
  /** Whether a walk of the group has ended since its lists last changed: below 100 is then not a walk under way. */
  walkedSince: boolean;
  /** Known time: when its lists last changed; null for a group no list promises. */
  listChangedAt: Date | null;
  /** The first missing resources, by name (at most MISSING_NAMED). */
  missingNamed: MissingResource[];
}

export interface CoverageRow extends GroupCoverage {
  source: string;
  group: string;
}

/** How many missing resources each group names. */
export const MISSING_NAMED = 5;

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

/** Per source and group, in that order. */
export async function readCoverage(w: Warehouse, named = MISSING_NAMED): Promise<CoverageRow[]> {
  const groups = await w.query<Record<string, unknown>>(sql`
    select source, "group" as grp, expected, covered, missing, not_offered, walked_since, list_changed_at
    from analytics.coverage order by source, "group"`);
  const missing = await w.query<{ source: string; grp: string; resource: string; why: string }>(sql`
    select source, grp, resource, why from (
      select source, "group" as grp, resource, why, row_number() over (partition by source, "group" order by resource) as n
      from analytics.coverage_resources where offered and not held
    ) m where n <= ${named} order by source, grp, resource`);
  return groups.map((r) => ({
    source: String(r.source),
    group: String(r.grp),
    expected: Number(r.expected),
    covered: Number(r.covered),
    missing: Number(r.missing),
    notOffered: Number(r.not_offered),
    walkedSince: r.walked_since === true,
    listChangedAt: asDate(r.list_changed_at),
    missingNamed: missing.filter((m) => m.source === r.source && m.grp === r.grp).map((m) => ({ resource: m.resource, why: m.why })),
  }));
}

/** Pure: held per 100 expected, floored to one decimal (99.96 is not 100); 100 when nothing is expected. */
export function coveragePercent(c: Pick<GroupCoverage, 'expected' | 'covered'>): number {
  return c.expected === 0 ? 100 : Math.floor((c.covered * 1000) / c.expected) / 10;
}

/** Pure: `47/200 (23.5%)`, or `12/12`. */
export function coverageText(c: Pick<GroupCoverage, 'expected' | 'covered'>): string {
  return c.covered === c.expected ? `${c.covered}/${c.expected}` : `${c.covered}/${c.expected} (${coveragePercent(c)}%)`;
}

/** Pure: below `minPct` (a group expecting nothing never is). */
export function belowCoverage(c: Pick<GroupCoverage, 'expected' | 'covered'>, minPct: number): boolean {
  return c.expected > 0 && c.covered * 100 < minPct * c.expected;
}

/** Pure: `token/a/snapshot: never fetched; token/b/snapshot: never fetched and 145 more`. */
export function missingText(c: Pick<GroupCoverage, 'missing' | 'missingNamed'>): string {
  const named = c.missingNamed.map((m) => `${m.resource}: ${m.why}`).join('; ');
  const more = c.missing - c.missingNamed.length;
  return more > 0 ? `${named} and ${more} more` : named;
}
