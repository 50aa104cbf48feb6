// `tesync replay`: the warehouse written again from its archive alone (src/replay/), into a
// database given (--into), or, with --check, into a scratch database on the same server, created
// and dropped here, then compared with the warehouse. Part of the composition root: it hands the
// replay today's job catalog and the settings of this configuration.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { databaseUrlProblem } from '../lib/config.ts';
import { catalog } from '../resources/index.ts';
import { describePostgresUrl, openWarehouse, type Warehouse } from '../store/connection.ts';
import { quoteIdentifier } from '../store/quote.ts';
import { compareWarehouses, type Comparison } from '../replay/compare.ts';
import { replayArchive, ReplayTargetNotEmpty, type ReplayReport } from '../replay/replay.ts';
import { UsageError, type CommandContext } from './context.ts';
import { comparisonLines, replayLines } from './replay-format.ts';
import { settingsFrom } from './sync-session.ts';

const HELP = `Usage: tesync replay [--into DATABASE_URL] [--check] [--json]

The warehouse written again from its archive alone: every body it archived
(sync.raw_responses) read, in the order the warehouse received them, by the
same readers and written by the same write path as a sync, each write known at
the instant its original was (sync.writes), a body refused then read at the
instant it was received. No request is sent.

  --into URL  replay into this database (empty, or migrated and empty): the
              warehouse as today's readers would have written it
  --check     replay into a scratch database on the same server (created and
              dropped by tesync, named tesync_replay_check_...), or into --into,
              and compare: every table of app and gateway, every T_history
              (known_from, known_to, values), the daily archives, T_as_of at
              every run's end. Exit 0 when equal; otherwise a table of the
              differences per table and key, exit 1
  --json      one JSON object: the replay's counts, and the comparison

What cannot be replayed is counted, not left out: bodies no write record
names (received before sync.writes began), writes whose body is gone,
requests no archived body answers. Exit 2 for a bad command line, or a
database to replay into that already holds a warehouse.`;

/** The columns the text fits: an 80-column terminal. */
const WIDTH = 80;

export async function runReplay({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { into: { type: 'string' }, check: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean' } }, strict: true });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (values.into === undefined && !values.check) throw new UsageError('tesync replay needs --into DATABASE_URL, --check, or both');
  const wrong = values.into === undefined ? undefined : databaseUrlProblem(values.into);
  if (wrong) throw new UsageError(`--into: ${wrong}`);
  const source = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  let scratch: { name: string; url: string } | undefined;
  let target: Warehouse | undefined;
  try {
    await source.migrate();
    if (values.into !== undefined) {
      if (sameDatabase(values.into, config.databaseUrl ?? source.embeddedUrl)) throw new UsageError('--into names the warehouse itself: replay into another database');
    } else {
      scratch = await createScratch(source, config.databaseUrl ?? source.embeddedUrl!);
    }
    target = await openWarehouse({ databaseUrl: values.into ?? scratch!.url, dataDir: '', maxConnections: 4 });
    await target.migrate();
    const into = scratch ? `a scratch database (${scratch.name}, dropped after)` : describePostgresUrl(values.into!);
    const progress = process.stderr.isTTY && !values.json ? (n: number) => process.stderr.write(`\rreplayed ${n.toLocaleString('en-US')} records and run ends`) : undefined;
    let report: ReplayReport;
    try {
      report = await replayArchive({ source, target, catalog, settings: (full) => settingsFrom(config, full), logger, ...(progress ? { onProgress: progress } : {}) });
    } catch (err) {
      if (err instanceof ReplayTargetNotEmpty) throw new UsageError(`--into: ${err.message}`);
      throw err;
    } finally {
      if (progress) process.stderr.write('\n');
    }
    let comparison: Comparison | undefined;
    let ends = 0;
    if (values.check) {
      const runEnds = await source.query<{ run: string; at: string }>(
        sql`select id::text as run, to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from sync.runs where finished_at is not null order by finished_at`,
      );
      ends = runEnds.length;
      comparison = await compareWarehouses(source, target, runEnds);
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ into: scratch ? { scratch: scratch.name } : { database: describePostgresUrl(values.into!) }, replay: report, ...(comparison ? { comparison } : {}) })}\n`);
    else process.stdout.write(`${[...replayLines(report, into, WIDTH), ...(comparison ? ['', ...comparisonLines(comparison, ends, WIDTH)] : [])].join('\n')}\n`);
    return comparison && !comparison.equal ? 1 : 0;
  } finally {
    await target?.close();
    if (scratch) await source.query(sql.raw(`drop database if exists ${quoteIdentifier(scratch.name)} with (force)`)).catch((err: unknown) => logger.error({ err }, `could not drop the scratch database ${scratch!.name}`));
    await source.close();
  }
}

/** Pure: whether two URLs name one database (host, port and name). */
function sameDatabase(a: string, b: string | undefined): boolean {
  return b !== undefined && describePostgresUrl(a) === describePostgresUrl(b);
}

/** A database of its own on the warehouse's server, named for what it is, and its URL. */
async function createScratch(source: Warehouse, serverUrl: string): Promise<{ name: string; url: string }> {
  const name = `tesync_replay_check_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await source.query(sql.raw(`create database ${quoteIdentifier(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}
