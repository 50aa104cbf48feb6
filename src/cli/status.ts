// `tesync status`: per source and resource group, how old the data is (the data's own time),
// upstream's freshness verdict and when tesync last confirmed it; the tables' sizes; failing
// resources by cause; the last runs. Exits 1 when a check fails (or nothing was synced), so
// cron can use it as a health check. It only reads: a database without tesync's schema, or
// with another release's, is named as such and left exactly as it was (exit 2).
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import { readMigrationState, type MigrationState } from '../store/schema/migration-state.ts';
import { readStatus } from '../store/read/status.ts';
import { WarehouseClock } from '../store/warehouse-clock.ts';
import { belowMinCoverage, overMaxAge, overMaxUnconfirmed } from '../store/read/status-checks.ts';
import type { TableSizes } from '../store/read/table-sizes.ts';
import { joinNegativeValues, positiveNumberFlag, shownValue } from './flag-values.ts';
import { UsageError, type CommandContext } from './context.ts';
import { fitLine, formatStatus } from './status-format.ts';
import { serveHost, servePort, serveStatusPage } from './status-serve.ts';
import { queuesPlaceLines, readQueuesPlace } from './status-redis.ts';

export { dataOf, overMaxAge, overMaxUnconfirmed, type OverLimit } from '../store/read/status-checks.ts';

const HELP = `Usage: tesync status [--json] [--wide] [--max-age HOURS]
                     [--max-unconfirmed HOURS] [--min-coverage PCT]
       tesync status --serve [--port N] [--host ADDRESS] [--max-age HOURS]
                     [--max-unconfirmed HOURS] [--min-coverage PCT]

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
  --min-coverage PCT       exit 1 when a group holds less than PCT percent of
                           what its lists promise (listed tokens' routes,
                           their charts, periods and timeframes), naming what
                           is missing. With any check, TE_MIN_COVERAGE (100)
                           by default, for each group a walk has ended since
                           its lists last changed (an interrupted one too)
  --wide                   the full width, one line per group (otherwise the
                           terminal's width, or 80 columns when not a terminal)
  --json                   the same as JSON
  --serve                  serve the status page a worker serves at / (groups
                           against their thresholds, runs, rate budget, failing
                           resources and their archived bodies) until Ctrl-C;
                           read-only. Thresholds: --max-age / --max-unconfirmed,
                           else from each group's TE_SCHEDULE_* (two rounds)
  --port N                 with --serve: the port (default TE_METRICS_PORT;
                           0: any free one)
  --host ADDRESS           with --serve: the address to listen on (default
                           127.0.0.1: this machine only)

HOURS: a number greater than 0 (24, 1.5). Each check says which group and
resource failed it, how old, by which clock. Exit 2, having changed nothing,
when the database is not a tesync warehouse or holds another release's schema.`;

const NUMERIC = ['--max-age', '--max-unconfirmed', '--min-coverage'] as const;

export async function runStatusCommand({ config, logger, argv }: CommandContext): Promise<number> {
  const values = parseStatusArgs(argv);
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const maxAgeHours = hoursOption('--max-age', values['max-age']);
  const maxUnconfirmedHours = hoursOption('--max-unconfirmed', values['max-unconfirmed']);
  const minCoverage = percentOption('--min-coverage', values['min-coverage']);
  if (!values.serve && (values.port !== undefined || values.host !== undefined)) throw new UsageError(`${values.port !== undefined ? '--port' : '--host'} goes with --serve: tesync status --serve ${values.port !== undefined ? '--port 9464' : '--host 127.0.0.1'}`);
  if (values.serve && (values.json || values.wide)) throw new UsageError(`--serve serves the page: leave out ${values.json ? '--json' : '--wide'} (the page's model is at /status.json)`);
  if (values.serve) servePort(values.port, config.worker.metricsPort);
  if (values.serve) serveHost(values.host);
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: config.databasePool });
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
    if (values.serve) {
      if (schema.state === 'none') {
        process.stderr.write('tesync: nothing synced yet: the status page has nothing to show; run `tesync sync` (or `tesync demo`) first\n');
        return 1;
      }
      return await serveStatusPage(config, logger, warehouse, { port: values.port, host: values.host, flags: { maxAgeHours, maxUnconfirmedHours, minCoveragePct: minCoverage } });
    }
    // The embedded warehouse before its first sync: tesync's own, with nothing in it yet.
    const { groups, runs, sizes } = schema.state === 'none' ? { groups: [], runs: [], sizes: { schemas: [], tables: [] } satisfies TableSizes } : await readStatus(warehouse);
    // Ages are judged on the warehouse's clock, the one every stored time is on, not this process's.
    const now = schema.state === 'none' ? await databaseNow(warehouse) : await WarehouseClock.read(warehouse.db);
    const over = [
      ...(maxAgeHours === undefined ? [] : overMaxAge(groups, now, maxAgeHours)),
      ...(maxUnconfirmedHours === undefined ? [] : overMaxUnconfirmed(groups, now, maxUnconfirmedHours)),
    ];
    const checked = maxAgeHours !== undefined || maxUnconfirmedHours !== undefined || minCoverage !== undefined;
    // Any check judges coverage too: a walk stopped half-way is not on time, whatever the ages.
    if (checked) over.push(...belowMinCoverage(groups, minCoverage, config.minCoverage));
    const queues = await readQueuesPlace(config);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ warehouse: warehouse.location, ...(queues ? { queues } : {}), groups, sizes, runs, overLimit: over }, null, 2)}\n`);
    } else {
      const width = outputWidth(values.wide === true, process.stdout);
      process.stdout.write(formatStatus(warehouse.location, groups, runs, now, { sizes, width, ...(checked ? { over } : {}) }));
      if (queues) process.stdout.write(`${queuesPlaceLines(queues, width).join('\n')}\n`);
    }
    if (checked && (groups.length === 0 || over.length > 0)) return 1;
    return 0;
  } finally {
    await warehouse.close();
  }
}

/** The database server's clock, before tesync's schema (and its `sync.server_clock()`) is there. */
async function databaseNow(warehouse: Warehouse): Promise<Date> {
  const [row] = await warehouse.query<{ now: string }>(sql`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as now`);
  return new Date(row!.now);
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
        'min-coverage': { type: 'string' },
        serve: { type: 'boolean', default: false },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    // Node's message for `--max-age --json` runs over three lines: one line, naming the flag.
    const flag = NUMERIC.find((f) => err instanceof Error && err.message.includes(`'${f}`));
    if (flag === '--min-coverage') throw new UsageError('--min-coverage needs a percentage from 0 to 100, e.g. --min-coverage 100');
    if (flag) throw new UsageError(`${flag} needs a number of hours greater than 0, e.g. ${flag} 24`);
    throw err;
  }
}

/**
 * Pure: a number of hours greater than 0, written as digits (`24`, `1.5`). 0 is refused: every
 * datum is older than 0 hours, so the check could only fail.
 */
export function hoursOption(name: string, value: string | undefined): number | undefined {
  return value === undefined ? undefined : positiveNumberFlag(name, value, 'hours', '24');
}

/** Pure: a percentage from 0 to 100, written as digits (`100`, `99.5`). */
export function percentOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 100)) throw new UsageError(`${name} must be a percentage from 0 to 100 (e.g. ${name} 100), not ${shownValue(value)}`);
  return n;
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

