// `tesync status`: per source and resource group, how fresh the mirror is. Exits 1 when a
// group is older than --max-age (or never synced), so cron can use it as a health check.
import { parseArgs } from 'node:util';
import { openWarehouse } from '../warehouse/connection.ts';
import { readStatus, type FailureCount, type GroupStatus, type RunSummary } from '../warehouse/status.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync status [--json] [--max-age HOURS]

Per source and resource group: last success, age of the stalest resource, rows, statuses,
last error; then the failing resources counted by cause (error class, HTTP status, upstream
problem code). --max-age: exit 1 when any group is older than HOURS (or was never synced).`;

export async function runStatus({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { json: { type: 'boolean', default: false }, 'max-age': { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const maxAgeHours = values['max-age'] === undefined ? undefined : Number(values['max-age']);
  if (maxAgeHours !== undefined && !(maxAgeHours > 0)) throw new UsageError('--max-age must be a number of hours greater than 0');
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await warehouse.migrate();
    const { groups, runs } = await readStatus(warehouse);
    const now = new Date();
    const stale = maxAgeHours === undefined ? [] : staleGroups(groups, now, maxAgeHours);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ warehouse: warehouse.location, groups, runs, stale: stale.map((g) => `${g.source}.${g.group}`) }, null, 2)}\n`);
    } else {
      process.stdout.write(formatStatus(warehouse.location, groups, runs, now, stale));
    }
    if (maxAgeHours !== undefined && (groups.length === 0 || stale.length > 0)) return 1;
    return 0;
  } finally {
    await warehouse.close();
  }
}

export function staleGroups(groups: GroupStatus[], now: Date, maxAgeHours: number): GroupStatus[] {
  const limit = now.getTime() - maxAgeHours * 3600_000;
  return groups.filter((g) => !g.oldestVerifiedAt || g.oldestVerifiedAt.getTime() < limit);
}

export function age(from: Date | null, now: Date): string {
  if (!from) return 'never';
  const s = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)}h`;
  return `${(s / 86400).toFixed(1)}d`;
}

export function formatStatus(location: string, groups: GroupStatus[], runs: RunSummary[], now: Date, stale: GroupStatus[] = []): string {
  const out: string[] = [`Warehouse: ${location}`, ''];
  if (groups.length === 0) {
    out.push('Nothing synced yet: run `tesync sync`.');
    return `${out.join('\n')}\n`;
  }
  const header = ['source', 'group', 'resources', 'last success', 'stalest', 'rows written', 'status', 'last error'];
  const body = groups.map((g) => [
    g.source,
    g.group,
    String(g.resources),
    age(g.lastSuccessAt, now),
    age(g.oldestVerifiedAt, now) + (stale.includes(g) ? ' (!)' : ''),
    String(g.rows),
    Object.entries(g.statuses)
      .sort()
      .map(([s, n]) => `${s} ${n}`)
      .join(', '),
    g.lastError ? truncate(g.lastError, 60) : '',
  ]);
  out.push(...table([header, ...body]));
  const failing = groups.filter((g) => g.failures.length > 0);
  if (failing.length > 0) {
    out.push('', 'Failing resources by cause:');
    for (const g of failing) out.push(`  ${g.source}.${g.group}: ${g.failures.map(formatCause).join(', ')}`);
  }
  if (runs.length > 0) {
    out.push('', 'Recent runs:');
    for (const r of runs) out.push(`  ${r.startedAt.toISOString()}  ${r.status.padEnd(9)} ${r.trigger.padEnd(8)} ${r.id}`);
  }
  return `${out.join('\n')}\n`;
}

/** `3 failed ProblemError 401 unauthorized`: the count, then what the failure columns say. */
export function formatCause(c: FailureCount): string {
  const what = [c.type ?? 'unknown error', c.httpStatus === null ? null : String(c.httpStatus), c.code].filter((x) => x !== null).join(' ');
  return `${c.resources} ${c.status} ${what}`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}
