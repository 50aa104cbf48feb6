// `tesync sync`: one full walk in this process, no Redis needed. One sync per source at a
// time on a warehouse (src/store/books/source-lock.ts): a source another sync is walking is
// left to it, or waited for with --wait.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { WalkStats } from '../ports/run-ledger.ts';
import { recordable, RECORD_CHARS } from '../lib/recordable.ts';
import { groups } from '../resources/index.ts';
import { openWarehouse } from '../store/connection.ts';
import { listedTokens, unknownSlugs } from '../store/read/listed-tokens.ts';
import { describeKeyRefusal } from '../store/books/request-summary.ts';
import { describeHolders, lockSources, LockLostError, type LockHolder } from '../store/books/source-lock.ts';
import type { CommandContext } from './context.ts';
import { failureHints } from './hints.ts';
import { INTERRUPT_EXIT_CODE, signalName, stoppedBeforeTheWalk, watchInterrupts, type Interrupts, type InterruptSignal } from './interrupt.ts';
import { createProgressDisplay, type ProgressDisplay } from './progress.ts';
import { syncBudget } from './sync-budget.ts';
import { deliverAtSyncEnd, performSync, type SyncOutcome } from './sync-session.ts';
import { configuredUpstreams, ensureBoundUpstream } from './upstream-check.ts';
import { onlyArg, sourcesArg, unknownTokensLine, WALK_OPTIONS } from './walk-args.ts';
import { optionLines } from './help-text.ts';

const HELP = [
  `Usage: tesync sync [--source app|gateway] [--token SLUG]... [--only GROUP,...]
                   [--full] [--wait] [--json] [--force]

One full walk of the configured sources into the warehouse, in this process.`,
  ...optionLines(
    [
      ['--source S', 'only this source (default: every configured source)'],
      ['--token SLUG', "only this token's resources (repeatable)"],
      ['--only G,...', `only these resource groups (${groups().join(', ')})`],
      ['--full', 'ignore change markers: fetch everything again'],
      ['--wait', 'when another tesync sync is walking a source, wait for it to finish (default: leave that source to it; with nothing left, exit 0 saying so)'],
      ['--json', 'JSON log lines and a JSON summary, even on a terminal'],
      ['--force', 'sync into a warehouse bound to another upstream: rebind it to this one (recorded in sync.upstream_binding_log; without it: exit 2, nothing written)'],
    ],
    16,
  ),
  '',
  `Requests are paced on the rate budget the workers share (in Redis with
REDIS_URL set, otherwise in the warehouse), under TE_QUEUE_PREFIX.`,
].join('\n');

export async function runSync({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: WALK_OPTIONS,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const sources = sourcesArg(config, values.source);
  const only = onlyArg(values.only);
  const runId = randomUUID();

  // On a terminal a progress line shows the command from its start (what it does or waits
  // for, then the walk), and only warnings are logged beside it; elsewhere (or with --json)
  // the pino lines are the progress.
  const progress = process.stderr.isTTY && !values.json ? createProgressDisplay() : undefined;
  /** A line on stderr, above the progress line when there is one. */
  const say = (line: string) => (progress ? progress.print(line, process.stderr) : process.stderr.write(line));
  const interrupts = watchInterrupts({ say, phase: progress?.phase });
  try {
    return await syncUntilInterrupted({ config, logger, values, sources, only, runId, progress, say, interrupts });
  } catch (err) {
    progress?.stop();
    return stoppedBeforeTheWalk(err, interrupts, say);
  } finally {
    interrupts.dispose();
  }
}

interface SyncSteps {
  config: CommandContext['config'];
  logger: CommandContext['logger'];
  values: { token?: string[] | undefined; full: boolean; wait: boolean; json: boolean; force: boolean };
  sources: ReturnType<typeof sourcesArg>;
  only: string[];
  runId: string;
  progress: ProgressDisplay | undefined;
  say: (line: string) => void;
  interrupts: Interrupts;
}

async function syncUntilInterrupted({ config, logger, values, sources, only, runId, progress, say, interrupts }: SyncSteps): Promise<number> {
  progress?.phase('opening the warehouse');
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: config.databasePool }).catch((err: unknown) => {
    progress?.stop();
    throw err;
  });
  try {
    interrupts.check();
    progress?.phase('updating the warehouse schema');
    await warehouse.migrate();
    interrupts.check();
    progress?.phase('checking the warehouse\'s upstream');
    // Beside a progress line only warnings are logged (a rebinding is one), above it, in words.
    const quiet = progress ? progress.logger(logger) : logger;
    const bindings = await ensureBoundUpstream(warehouse, configuredUpstreams(config, sources), { command: 'sync', force: values.force, logger: quiet });
    if (values.token?.length) {
      // Before a run is opened: a --token that names no token the lists hold (as last
      // fetched) is a mistyped command line, not a walk. Lists never fetched cannot say.
      progress?.phase('checking --token against the token lists');
      const rebound = bindings.filter((b) => b.action === 'rebind').map((b) => b.source);
      const unknown = await unknownBeforeTheWalk(warehouse, sources, values.token, rebound);
      if (unknown) {
        progress?.stop();
        process.stderr.write(`tesync: ${unknownTokensLine(unknown, 'fetched')} ${AS_LAST_FETCHED}\n`);
        return 2;
      }
    }
    progress?.phase('checking for another sync');
    const locks = await lockSources(warehouse, sources, {
      runId,
      logger: quiet,
      wait: values.wait,
      signal: interrupts.signal,
      onWait: (holders) => {
        say(`tesync: waiting: ${describeHolders(holders)}\n`);
        progress?.phase('waiting for the other sync to finish');
      },
    });
    try {
      if (locks.held.length === 0) {
        progress?.stop();
        process.stdout.write(values.json ? `${JSON.stringify({ status: 'skipped', skipped: locks.busy })}\n` : `${skippedLine(locks.busy)}\n`);
        if (values.json) process.stderr.write(`tesync: ${skippedLine(locks.busy)}\n`);
        return 0;
      }
      if (locks.busy.length > 0) {
        say(`tesync: skipped: ${describeHolders(locks.busy)}; this sync walks ${locks.held.join(' and ')}\n`);
      }
      interrupts.check();
      const budget = await syncBudget(config, warehouse);
      if (budget.notShared) say(`tesync: warning: ${budget.notShared}\n`);
      let outcome: SyncOutcome;
      try {
        interrupts.check();
        progress?.phase('starting the run');
        outcome = await performSync(config, quiet, warehouse, {
          sources: locks.held as typeof sources,
          tokens: values.token ?? [],
          only,
          full: values.full,
          trigger: 'cli',
          runId,
          // Runs of these sources still `running` lost their process: performSync closes them.
          heldSources: locks.held,
          budget: budget.budget,
          signal: AbortSignal.any([locks.lost, interrupts.signal]),
          hold: (work) => interrupts.hold(work),
          ...(progress ? { onProgress: progress.update } : {}),
        });
      } finally {
        progress?.stop();
        await budget.close();
      }
      // Judged after the walk too: its token lists are the ones just fetched (the first sync's,
      // or newer than those checked above). Lists that failed to arrive cannot tell a wrong
      // slug from a new token.
      const unknown = values.token?.length && outcome.status !== 'failed' && outcome.status !== 'interrupted' ? unknownSlugs(values.token, await listedTokens(warehouse, locks.held)) : [];
      // None of the tokens asked for exists: the walk fetched the lists and nothing else, which
      // is no "Sync succeeded".
      const noneListed = unknown.length > 0 && unknown.length === new Set(values.token).size;
      const skipped = locks.busy.length > 0 ? { skipped: locks.busy } : {};
      const unknownTokens = unknown.length > 0 ? { unknownTokens: unknown } : {};
      process.stdout.write(values.json ? `${JSON.stringify({ ...outcome, stats: printableStats(outcome.stats), ...skipped, ...unknownTokens })}\n` : formatSummary(outcome, { noneListed }));
      for (const hint of failureHints(outcome.stats, config)) process.stderr.write(`tesync: ${hint}\n`);
      // The text summary says it already; beside JSON, people still get one line.
      if (values.json) for (const r of outcome.requests.keyRefusals ?? []) process.stderr.write(`tesync: warning: ${describeKeyRefusal(r)}\n`);
      // What the run told goes out now, for a bounded time; the rest waits for the next sync or a worker.
      if (!interrupts.received) await deliverAtSyncEnd(config, warehouse, quiet);
      if (unknown.length > 0) {
        say(`tesync: ${unknownTokensLine(unknown, 'fetched')}\n`);
        return 2;
      }
      if (outcome.status === 'interrupted' && interrupts.received) {
        say(`tesync: ${interruptedLine(interrupts.received, outcome)}\n`);
        return INTERRUPT_EXIT_CODE[interrupts.received];
      }
      if (locks.lost.aborted) {
        const reason = locks.lost.reason;
        process.stderr.write(`tesync: error: ${reason instanceof LockLostError ? reason.message : 'lost the warehouse lock'}: stopped this sync early (the connection holding it dropped); the other sync goes on\n`);
        return 1;
      }
      return outcome.status === 'failed' ? 1 : 0;
    } finally {
      await locks.release();
    }
  } finally {
    progress?.stop();
    await warehouse.close();
  }
}

/** What the pre-walk --token line adds: the lists it was judged by, and how to fetch them again. */
const AS_LAST_FETCHED = '(the lists as last fetched; `tesync sync --only tokens` fetches them again)';

/**
 * The --token slugs to refuse before a run is opened: every one of them, when the warehouse
 * holds a token list of each source asked (not one rebound just now: its lists are another
 * upstream's) and none of the slugs is on them. Undefined when that cannot be told (a list
 * never fetched: the walk reads the lists first, and the slugs are judged after it) or when
 * some slug is listed (the walk goes on for those; the others are named after it).
 */
export async function unknownBeforeTheWalk(
  warehouse: Parameters<typeof listedTokens>[0],
  sources: readonly string[],
  asked: readonly string[],
  rebound: readonly string[] = [],
): Promise<{ slug: string; meant?: string }[] | undefined> {
  if (sources.some((s) => rebound.includes(s))) return undefined;
  const lists = await Promise.all(sources.map((s) => listedTokens(warehouse, [s])));
  if (lists.some((l) => l.length === 0)) return undefined;
  const unknown = unknownSlugs(asked, lists.flat());
  return unknown.length > 0 && unknown.length === new Set(asked).size ? unknown : undefined;
}

/** Pure: the one line of a walk a signal stopped (the summary above it names the run); fits 80 columns. */
export function interruptedLine(signal: InterruptSignal, o: Pick<SyncOutcome, 'stats'>, command: 'sync' | 'demo' = 'sync'): string {
  return `${signalName(signal)}: run interrupted (${o.stats.done} done, ${o.stats.cancelled} left); the next ${command} goes on`;
}

/** Pure: the one line of a sync that found every source it was asked for being synced already. */
export function skippedLine(busy: readonly LockHolder[]): string {
  return `Sync skipped: ${describeHolders(busy)}; nothing to do (--wait waits for it instead)`;
}

/**
 * Pure: a walk's stats as printed, each failure's text recordable (src/lib/recordable.ts):
 * whatever an error said, no control character reaches the terminal and no line runs on.
 */
export function printableStats(stats: WalkStats): WalkStats {
  return { ...stats, failures: stats.failures.map((f) => ({ ...f, resource: recordable(f.resource, RECORD_CHARS), error: recordable(f.error, RECORD_CHARS) })) };
}

/**
 * Pure: the text summary of a walk; each failure's text recordable, as printableStats.
 * `noneListed`: no token asked for by --token is on the lists the walk fetched, so the walk
 * fetched those lists and nothing else: said as such, never "Sync succeeded". `archived`: the
 * rows the run's end added to the daily archives, in the rows written.
 */
export function formatSummary(o: SyncOutcome, { noneListed = false, archived }: { noneListed?: boolean; archived?: number | undefined } = {}): string {
  const seconds = (o.durationMs / 1000).toFixed(1);
  // The daily archives are filled at the run's end, not by its jobs: counted when the caller
  // counted them (the demo, from the rows per table it shows), and said apart.
  const rows = archived ? `${o.stats.rows + archived} (${archived} of them in the daily archives, filled at the run's end)` : String(o.stats.rows);
  const lines = [
    noneListed
      ? `Sync found no token asked for by --token: only the token lists were fetched, in ${seconds} s (run ${o.runId}, recorded ${o.status})`
      : `Sync ${o.status} in ${seconds} s (run ${o.runId})`,
    `  resources: ${o.stats.done} done, ${o.stats.failed} failed${o.stats.cancelled ? `, ${o.stats.cancelled} not reached` : ''}; rows written: ${rows}`,
    `  requests: ${o.requests.total} (${Object.entries(o.requests.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}); 429s waited out: ${o.requests.rateLimited}`,
  ];
  // Keys refused everywhere first: the one failure that hides behind statuses like `unauthorized`.
  for (const r of o.requests.keyRefusals ?? []) lines.push(`  warning: ${describeKeyRefusal(r)}`);
  for (const [group, counts] of Object.entries(o.stats.byGroup).sort()) {
    lines.push(`  ${group.padEnd(18)} ${Object.entries(counts).map(([s, n]) => `${s} ${n}`).join(', ')}`);
  }
  for (const f of o.stats.failures.slice(0, 10)) lines.push(`  failed: ${recordable(f.resource, RECORD_CHARS)} (${f.job}): ${recordable(f.error, RECORD_CHARS)}`);
  // Written but not whole: why, as the resource's state says it.
  for (const p of o.partials?.resources ?? []) lines.push(`  partial: ${recordable(p.resource, RECORD_CHARS)} (${p.source}): ${recordable(p.note, RECORD_CHARS)}`);
  const more = (o.partials?.total ?? 0) - (o.partials?.resources.length ?? 0);
  if (more > 0) lines.push(`  partial: and ${more} more (sync.resource_state where status = 'partial')`);
  return `${lines.join('\n')}\n`;
}
