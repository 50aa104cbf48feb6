// `tesync status`: per source and resource group, how old the data is (the data's own time),
// upstream's freshness verdict and when tesync last confirmed it; the tables' sizes; failing
// resources by cause; the last runs. Exits 1 when a check fails (or nothing was synced), so
// cron can use it as a health check. It only reads: a database without tesync's schema, or
// with another release's, is named as such and left exactly as it was (exit 2).
import { parseArgs } from 'node:util';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import { readMigrationState, type MigrationState } from '../store/migration-state.ts';
import { readStatus, type GroupStatus, type OldestData } from '../store/status.ts';
import type { TableSizes } from '../store/table-sizes.ts';
import { positiveNumberFlag } from './flag-values.ts';
import { UsageError, type CommandContext } from './context.ts';
import { age, ago, fitLine, formatStatus, utc } from './status-format.ts';

const HELP = `Usage: tesync status [--json] [--wide] [--max-age HOURS]
                     [--max-unconfirmed HOURS]

Per source and resource group: the data's own time (upstream's asOf; for history
resources the newest history point) and its age, upstream's freshness verdicts,
when tesync last confirmed the group, statuses and the last error; then the
tables' sizes, the failing resources by cause, and the last runs. A group is as
old as its oldest data: the resource that lags decides, and the checks name it.
Resources of delisted tokens, those their list no longer lists (a chart gone
from its catalog, a period no longer configured), and those upstream says do
not exist (not_found) or tesync skips (skipped) are left out of the ages and
the checks.

  --max-age HOURS          exit 1 when a group's oldest data is older than
                           HOURS by the data's own clock (a group without a
                           data time, the OpenAPI document: by when tesync last
                           confirmed it), or when nothing was synced
  --max-unconfirmed HOURS  exit 1 when tesync has not confirmed a resource
                           (fetched it, or found it unchanged) within HOURS, or
                           never: tesync's clock, whatever the data's age
  --wide                   the full width, one line per group (otherwise the
                           terminal's width, or 80 columns when not a terminal)
  --json                   the same as JSON

HOURS: a number greater than 0 (24, 1.5). Each check says which group and
resource failed it, how old, by which clock. Exit 2, having changed nothing,
when the database is not a tesync warehouse or holds another release's schema.`;

/** Why a group fails a check, for people and for --json. */
export interface OverLimit {
  source: string;
  group: string;
  /** The clock judged: the data's own time, or tesync's (when it confirmed the data). */
  clock: 'newest history point' | 'upstream asOf' | 'last confirmed' | 'least recently confirmed';
  at: Date | null;
  ageHours: number | null;
  /** The resource judged (`token/<slug>/history`), and its token; null when a group as a whole was. */
  resource: string | null;
  token: string | null;
  reason: string;
}

const NUMERIC = ['--max-age', '--max-unconfirmed'] as const;

export async function runStatus({ config, argv }: CommandContext): Promise<number> {
  const values = parseStatusArgs(argv);
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const maxAgeHours = hoursOption('--max-age', values['max-age']);
  const maxUnconfirmedHours = hoursOption('--max-unconfirmed', values['max-unconfirmed']);
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    const schema = await readMigrationState(warehouse);
    const refusal = migrationRefusal(schema, warehouse);
    if (refusal) {
      process.stderr.write(`tesync: ${refusal}\n`);
      return 2;
    }
    if (schema.state === 'current' && schema.sqlFilesInStep === false) {
      // Read as they are (status never migrates); the figures may be an older release's.
      const note = "tesync: note: the warehouse's SQL views differ from this tesync's: run `tesync migrate`";
      process.stderr.write(`${fitLine(note, outputWidth(values.wide === true, process.stderr)).join('\n')}\n`);
    }
    // The embedded warehouse before its first sync: tesync's own, with nothing in it yet.
    const { groups, runs, sizes } = schema.state === 'none' ? { groups: [], runs: [], sizes: { schemas: [], tables: [] } satisfies TableSizes } : await readStatus(warehouse);
    const now = new Date();
    const over = [
      ...(maxAgeHours === undefined ? [] : overMaxAge(groups, now, maxAgeHours)),
      ...(maxUnconfirmedHours === undefined ? [] : overMaxUnconfirmed(groups, now, maxUnconfirmedHours)),
    ];
    const checked = maxAgeHours !== undefined || maxUnconfirmedHours !== undefined;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ warehouse: warehouse.location, groups, sizes, runs, overLimit: over }, null, 2)}\n`);
    } else {
      const width = outputWidth(values.wide === true, process.stdout);
      process.stdout.write(formatStatus(warehouse.location, groups, runs, now, { sizes, width, ...(checked ? { over } : {}) }));
    }
    if (checked && (groups.length === 0 || over.length > 0)) return 1;
    return 0;
  } finally {
    await warehouse.close();
  }
}

function parseStatusArgs(argv: string[]) {
  try {
    return parseArgs({
      args: joinNegativeValues(argv, NUMERIC),
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        wide: { type: 'boolean', default: false },
        'max-age': { type: 'string' },
        'max-unconfirmed': { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    // Node's message for `--max-age --json` runs over three lines: one line, naming the flag.
    const flag = NUMERIC.find((f) => err instanceof Error && err.message.includes(`'${f}`));
    if (flag) throw new UsageError(`${flag} needs a number of hours greater than 0, e.g. ${flag} 24`);
    throw err;
  }
}

/**
 * Pure: `--max-age -3` as `--max-age=-3`, so that a negative number is judged as a value
 * (and refused by hoursOption, naming the flag) rather than taken for an unknown option.
 */
export function joinNegativeValues(argv: readonly string[], flags: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (flags.includes(a) && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * Pure: a number of hours greater than 0, written as digits (`24`, `1.5`). 0 is refused: every
 * datum is older than 0 hours, so the check could only fail.
 */
export function hoursOption(name: string, value: string | undefined): number | undefined {
  return value === undefined ? undefined : positiveNumberFlag(name, value, 'hours', '24');
}

/** Columns to fit: none with --wide; a terminal's own width; 80 for a pipe, a file or cron. */
export function outputWidth(wide: boolean, out: { isTTY?: boolean; columns?: number }): number {
  if (wide) return Infinity;
  return out.isTTY && out.columns && out.columns > 0 ? Math.max(20, out.columns) : 80;
}

/**
 * Pure: why this database cannot be reported on, or null. The embedded warehouse is tesync's
 * own: without a schema it is simply empty.
 */
export function migrationRefusal(m: MigrationState, w: Pick<Warehouse, 'kind' | 'location'>): string | null {
  if (m.state === 'none') {
    return w.kind === 'embedded'
      ? null
      : `not a tesync warehouse: ${w.location} has no tesync schema; point DATABASE_URL at your tesync warehouse, or run \`tesync migrate\` to make this database one`;
  }
  if (m.state === 'behind') {
    return `warehouse is at migration ${m.applied} (${m.appliedTag ?? 'unknown'}), this tesync expects ${m.expected} (${m.expectedTag}): run \`tesync migrate\` (${w.location})`;
  }
  if (m.state === 'ahead') {
    return `warehouse is at migration ${m.applied}, newer than this tesync, which expects ${m.expected} (${m.expectedTag}): run a tesync as new as the one that migrated it (${w.location})`;
  }
  return null;
}

const hoursSince = (at: Date, now: Date) => (now.getTime() - at.getTime()) / 3600_000;
const limitText = (option: string, hours: number) => `more than ${option} ${hours}h`;

/** Pure: whose data it is, for a reason: the token (and the resource, when the token has several of the group). */
export function dataOf(group: string, d: Pick<OldestData, 'resource' | 'token'>): string {
  if (d.token) return d.resource === `token/${d.token}/${group}` ? `data of token ${d.token}` : `data of token ${d.token} (${d.resource})`;
  return d.resource === group ? 'data' : `data of ${d.resource}`;
}

/**
 * Groups whose oldest judged data is older than `maxAgeHours` by the data's own clock. A
 * group with nothing to judge (every resource delisted, not found or skipped) passes. Pure.
 */
export function overMaxAge(groups: GroupStatus[], now: Date, maxAgeHours: number): OverLimit[] {
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
        reason: `${name}: ${dataOf(g.group, d)} is ${age(d.at, now)} old by ${what}, ${utc(d.at)} (${limitText('--max-age', maxAgeHours)}); ${verdict}; tesync last confirmed it ${ago(d.confirmedAt, now)}`,
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
        reason: `${name}: upstream gives no data time; judged by when tesync last confirmed ${whose}: ${c.at ? `${age(c.at, now)} ago` : 'never'} (${limitText('--max-age', maxAgeHours)})`,
      });
    }
  }
  return out;
}

/** Groups with a judged resource tesync has not confirmed within `hours`, or never; names it. Pure. */
export function overMaxUnconfirmed(groups: GroupStatus[], now: Date, hours: number): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const { leastConfirmed: c, neverConfirmed, checked } = g.checks;
    if (!c || checked === 0) continue;
    const h = c.at ? hoursSince(c.at, now) : null;
    if (neverConfirmed === 0 && h !== null && h <= hours) continue;
    const why =
      neverConfirmed > 0
        ? `never confirmed by tesync: ${c.resource}${neverConfirmed > 1 ? ` and ${neverConfirmed - 1} more` : ''} (${neverConfirmed} of ${checked} resources)`
        : `${c.resource}, the least recently confirmed resource, was confirmed by tesync ${age(c.at, now)} ago (${limitText('--max-unconfirmed', hours)})`;
    out.push({ source: g.source, group: g.group, clock: 'least recently confirmed', at: c.at, ageHours: h, resource: c.resource, token: c.token, reason: `${g.source}.${g.group}: ${why}` });
  }
  return out;
}

