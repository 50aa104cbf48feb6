// `tesync sync`: one full walk in this process, no Redis needed.
import { parseArgs } from 'node:util';
import { groups } from '../../jobs/index.ts';
import { openWarehouse } from '../warehouse/connection.ts';
import { describeKeyRefusal } from '../warehouse/request-summary.ts';
import type { CommandContext } from './context.ts';
import { failureHints } from './hints.ts';
import { createProgressDisplay } from './progress.ts';
import { performSync, type SyncOutcome } from './sync-session.ts';
import { onlyArg, sourcesArg } from './walk-args.ts';

const HELP = `Usage: tesync sync [--source app|gateway] [--token SLUG]... [--only GROUP,...] [--full] [--json]

One full walk of the configured sources into the warehouse, in this process.
  --source S    only this source (default: every configured source)
  --token SLUG  only this token's resources (repeatable)
  --only G,...  only these resource groups (${groups().join(', ')})
  --full        ignore change markers: fetch everything again
  --json        JSON log lines and a JSON summary, even on a terminal`;

export async function runSync({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      source: { type: 'string', multiple: true },
      token: { type: 'string', multiple: true },
      only: { type: 'string', multiple: true },
      full: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const sources = sourcesArg(config, values.source);
  const only = onlyArg(values.only);

  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await warehouse.migrate();
    // On a terminal a progress bar shows the walk, and only warnings are logged beside it;
    // elsewhere (or with --json) the pino lines are the progress.
    const progress = process.stderr.isTTY && !values.json ? createProgressDisplay() : undefined;
    let outcome: SyncOutcome;
    try {
      outcome = await performSync(config, progress ? logger.child({}, { level: 'warn' }) : logger, warehouse, {
        sources,
        tokens: values.token ?? [],
        only,
        full: values.full,
        trigger: 'cli',
        ...(progress ? { onProgress: progress.update } : {}),
      });
    } finally {
      progress?.stop();
    }
    process.stdout.write(values.json ? `${JSON.stringify(outcome)}\n` : formatSummary(outcome));
    for (const hint of failureHints(outcome.stats, config)) process.stderr.write(`tesync: ${hint}\n`);
    // The text summary says it already; beside JSON, people still get one line.
    if (values.json) for (const r of outcome.requests.keyRefusals ?? []) process.stderr.write(`tesync: warning: ${describeKeyRefusal(r)}\n`);
    return outcome.status === 'failed' ? 1 : 0;
  } finally {
    await warehouse.close();
  }
}

export function formatSummary(o: SyncOutcome): string {
  const lines = [
    `Sync ${o.status} in ${(o.durationMs / 1000).toFixed(1)} s (run ${o.runId})`,
    `  resources: ${o.stats.done} done, ${o.stats.failed} failed${o.stats.cancelled ? `, ${o.stats.cancelled} not reached` : ''}; rows written: ${o.stats.rows}`,
    `  requests: ${o.requests.total} (${Object.entries(o.requests.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}); 429s waited out: ${o.requests.rateLimited}`,
  ];
  // Keys refused everywhere first: the one failure that hides behind statuses like `unauthorized`.
  for (const r of o.requests.keyRefusals ?? []) lines.push(`  warning: ${describeKeyRefusal(r)}`);
  for (const [group, counts] of Object.entries(o.stats.byGroup).sort()) {
    lines.push(`  ${group.padEnd(18)} ${Object.entries(counts).map(([s, n]) => `${s} ${n}`).join(', ')}`);
  }
  for (const f of o.stats.failures.slice(0, 10)) lines.push(`  failed: ${f.resource} (${f.job}): ${f.error}`);
  return `${lines.join('\n')}\n`;
}
