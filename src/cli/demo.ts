// `tesync demo`: the bundled simulator on a free loopback port, synced into the embedded
// warehouse (or DATABASE_URL), then a summary and one example query. No Redis, no Docker,
// no configuration. A second run reuses the warehouse and shows how little it fetched.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../lib/config.ts';
import { DEMO_TOKENS, MAX_DEMO_TOKENS, startDemoSimulator } from './demo-simulator.ts';
import { COMMON_OPTIONS } from './walk-args.ts';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import type { CommandContext } from './context.ts';
import { joinNegativeValues, wholeNumberFlag } from './flag-values.ts';
import { exampleQuery } from './examples.ts';
import { fitRows, fitText } from './fit-table.ts';
import { createProgressDisplay } from './progress.ts';
import { performSync } from './sync-session.ts';
import { formatSummary, interruptedLine } from './sync.ts';
import { INTERRUPT_EXIT_CODE, stoppedBeforeTheWalk, watchInterrupts } from './interrupt.ts';
import { DAILY_ARCHIVE_NAMES } from '../schema/warehouse/history.ts';
import type { Source } from '../resources/index.ts';
import { describeHolders, lockSources, type SourceLocks } from '../store/books/source-lock.ts';
import { ensureBoundUpstream, simulatorUpstreams } from './upstream-check.ts';

const HELP = `Usage: tesync demo [--tokens N] [--page-size N] [--json] [--force]

Starts the bundled simulator, syncs both of its APIs into the warehouse (the
embedded Postgres server in TE_DATA_DIR unless DATABASE_URL is set), prints a
summary and an example query. The simulator's data runs up to today (UTC).
Fewer --tokens than the warehouse's last demo delists the others (the summary
says how many). A warehouse that mirrors another upstream is left alone (exit
2); --force rebinds it to the simulator (recorded in
sync.upstream_binding_log). --page-size N has the simulator serve its token
lists, screeners and chart catalogs in pages of N items, each page a request.`;

export async function runDemo({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    // `--tokens -5`: a value, said wrong as one (not the parser's "ambiguous").
    args: joinNegativeValues(argv, ['--tokens', '--page-size']),
    strict: true,
    options: {
      tokens: { type: 'string', default: String(DEMO_TOKENS) },
      'page-size': { type: 'string', default: '0' },
      ...COMMON_OPTIONS,
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // The demo is read by a person: a progress line on a terminal from the first moment (starting
  // an embedded warehouse for the first time takes seconds), and only warnings logged unless
  // --json asks for every line.
  const progress = process.stderr.isTTY && !values.json ? createProgressDisplay() : undefined;
  progress?.phase('starting the simulator');
  // Said, not replaced by the default: a demo of another size than asked for would mislead.
  let tokens: number;
  let pageSize: number;
  try {
    tokens = wholeNumberFlag('--tokens', values.tokens, 1, MAX_DEMO_TOKENS);
    pageSize = wholeNumberFlag('--page-size', values['page-size'], 0, 100_000, 'items a page, 0 for lists whole');
  } catch (err) {
    progress?.stop();
    throw err;
  }
  const { sim, appKey, gatewayKey } = await startDemoSimulator({ tokens, pageSize }).catch((err: unknown) => {
    progress?.stop();
    throw err;
  });
  // The demo's own configuration: the simulator as upstream, the user's warehouse settings.
  const demoConfig = loadConfig({
    TE_APP_URL: sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: sim.url,
    TE_GATEWAY_API_KEY: gatewayKey,
    ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}),
    ...(config.databaseSessionUrl ? { TE_DATABASE_SESSION_URL: config.databaseSessionUrl } : {}),
    TE_DATA_DIR: config.dataDir,
    LOG_LEVEL: config.logLevel,
    TE_CONCURRENCY: String(config.concurrency),
  });
  const quiet = { ...demoConfig, secrets: [...demoConfig.secrets, ...config.secrets] };
  // What the demo prints fits the terminal (80 columns off one), a line that fills the last
  // column wrapping on some terminals.
  const width = (process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 80) - 1;
  const say = (line: string) => (progress ? progress.print(fitText(line, width), process.stderr) : process.stderr.write(fitText(line, width)));
  const interrupts = watchInterrupts({ say, phase: progress?.phase });
  const runId = randomUUID();
  const quietLogger = values.json ? logger : progress ? progress.logger(logger) : logger.child({}, { level: 'warn' });
  let warehouse: Warehouse | undefined;
  let locks: SourceLocks | undefined;
  try {
    progress?.phase(config.databaseUrl ? 'opening the warehouse' : 'starting the embedded warehouse');
    warehouse = await openWarehouse({ databaseUrl: quiet.databaseUrl, sessionUrl: quiet.databaseSessionUrl, dataDir: quiet.dataDir, databasePool: quiet.databasePool });
    interrupts.check();
    progress?.phase('updating the warehouse schema');
    await warehouse.migrate();
    interrupts.check();
    // The simulator is one upstream whatever its port: a warehouse of real data is never its.
    progress?.phase('checking the warehouse\'s upstream');
    const binding = await ensureBoundUpstream(warehouse, simulatorUpstreams(['app', 'gateway']), { command: 'demo', force: values.force, logger: quietLogger });
    const rebound = binding.some((step) => step.action === 'rebind');
    // One walk per source at a time, as for `tesync sync`: a second demo waits for the first,
    // then fetches only what changed.
    progress?.phase('checking for another sync');
    locks = await lockSources(warehouse, DEMO_SOURCES, {
      runId,
      logger: quietLogger,
      wait: true,
      signal: interrupts.signal,
      onWait: (holders) => {
        say(`tesync: waiting: ${describeHolders(holders)}\n`);
        progress?.phase('waiting for the other sync to finish');
      },
    });
    interrupts.check();
    progress?.phase('counting the rows already there');
    const before = await tableCounts(warehouse);
    const firstRun = Object.values(before).every((n) => n === 0);
    const note = firstRun
      ? ''
      : rebound
        ? "The warehouse held another upstream's data: rebound to the simulator (--force); the simulator's data is synced over it.\n"
        : 'The warehouse already holds an earlier demo: only what changed is fetched.\n';
    const banner = fitText(`tesync demo: simulator at ${sim.url}\nwarehouse: ${warehouse.location}\n${note}\n`, width);
    if (progress) progress.print(banner);
    else process.stdout.write(banner);
    progress?.phase('starting the run');
    const outcome = await performSync(quiet, quietLogger, warehouse, {
      sources: DEMO_SOURCES,
      trigger: 'demo',
      runId,
      heldSources: locks.held,
      signal: AbortSignal.any([locks.lost, interrupts.signal]),
      hold: (work) => interrupts.hold(work),
      ...(progress ? { onProgress: progress.update } : {}),
    }).finally(() => progress?.stop());
    if (outcome.status === 'interrupted' && interrupts.received) {
      process.stdout.write(fitText(`\n${formatSummary(outcome)}`, width));
      say(`tesync: ${interruptedLine(interrupts.received, outcome, 'demo')}\n`);
      return INTERRUPT_EXIT_CODE[interrupts.received];
    }
    const after = await tableCounts(warehouse);
    const delisted = await delistedBy(warehouse, runId);
    const tokenLine = tokensLine([
      { source: 'app', listed: sim.data.appTokens().length, delisted: delisted.app },
      { source: 'gateway', listed: sim.data.gatewayTokens().length, delisted: delisted.gateway },
    ]);
    // One source for both: the rows written count the daily archives' as the lines below do.
    const archived = DAILY_ARCHIVE_NAMES.reduce((n, name) => n + Math.max(0, (after[name] ?? 0) - (before[name] ?? 0)), 0);
    process.stdout.write(fitText(`\n${formatSummary(outcome, { archived })}${tokenLine}\n\nRows per table (added this run):\n`, width));
    const nameWidth = Math.max(0, ...Object.keys(after).map((t) => t.length));
    for (const [table, n] of Object.entries(after)) {
      const added = n - (before[table] ?? 0);
      process.stdout.write(`  ${table.padEnd(nameWidth)} ${String(n).padStart(8)}${added ? `  (+${added})` : ''}\n`);
    }
    const example = exampleQuery('latest-screener');
    const rows = await warehouse.query(sql.raw(example.sql));
    const fitted = fitRows(rows, width);
    process.stdout.write(fitText(`\n${example.title}\nFrom docs/warehouse.md (example latest-screener):\n\n`, width));
    process.stdout.write(fitted.text);
    if (fitted.rounded) process.stdout.write(fitText('(numbers rounded to fit the terminal; the warehouse holds them exactly)\n', width));
    process.stdout.write(fitText(`\nQuery it yourself: ${warehouse.kind === 'embedded' ? '`npx tesync sql` serves this warehouse to psql and BI tools.' : 'point psql or a BI tool at DATABASE_URL.'}\n`, width));
    return outcome.status === 'failed' ? 1 : 0;
  } catch (err) {
    progress?.stop();
    return stoppedBeforeTheWalk(err, interrupts, say);
  } finally {
    progress?.stop();
    await locks?.release();
    await warehouse?.close();
    await sim.close();
    interrupts.dispose();
  }
}

const DEMO_SOURCES: Source[] = ['app', 'gateway'];

export interface TokenCount {
  source: Source;
  /** Tokens the simulator lists now (`--tokens`). */
  listed: number;
  /** Tokens this run delisted: the warehouse held them, the simulator no longer lists them. */
  delisted: number;
}

/**
 * Pure: the summary's tokens line. A demo with fewer `--tokens` than the warehouse's earlier
 * demo delists the others (kept, with `delisted_at`): said, with why and how to list them again.
 */
export function tokensLine(counts: readonly TokenCount[]): string {
  const line = `  tokens: ${counts.map((c) => `${c.listed} (${c.source})`).join(', ')}`;
  const delisting = counts.filter((c) => c.delisted > 0);
  if (delisting.length === 0) return line;
  const alike = delisting.length === counts.length && delisting.every((c) => c.delisted === delisting[0]!.delisted);
  const how = alike ? `${delisting[0]!.delisted} of each` : delisting.map((c) => `${c.delisted} (${c.source})`).join(', ');
  const listed = Math.max(...delisting.map((c) => c.listed));
  const keep = Math.max(...delisting.map((c) => c.listed + c.delisted));
  return `${line}; this demo delisted ${how}: the simulator now lists ${listed} (--tokens ${listed}); \`tesync demo --tokens ${keep}\` lists them again`;
}

/** Per source: the tokens this run marked delisted (the run that last wrote a row is its run_id). */
async function delistedBy(w: Warehouse, runId: string): Promise<Record<Source, number>> {
  const rows = await w.query<{ source: Source; n: number }>(
    sql`select 'app' as source, count(*)::int as n from app.tokens where delisted_at is not null and run_id = ${runId}
        union all select 'gateway', count(*)::int from gateway.tokens where delisted_at is not null and run_id = ${runId}`,
  );
  const of = (source: Source) => Number(rows.find((r) => r.source === source)?.n ?? 0);
  return { app: of('app'), gateway: of('gateway') };
}

async function tableCounts(w: Warehouse): Promise<Record<string, number>> {
  const tables = await w.query<{ name: string }>(
    sql`select table_schema || '.' || table_name as name from information_schema.tables where table_schema in ('app', 'gateway') and table_type = 'BASE TABLE' order by 1`,
  );
  const out: Record<string, number> = {};
  for (const { name } of tables) {
    const [r] = await w.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${name}`));
    out[name] = Number(r?.n ?? 0);
  }
  return out;
}
