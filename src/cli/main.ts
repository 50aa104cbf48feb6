// The composition root: parses the command line, loads configuration, builds clients and
// hands them to the command. The one place that turns errors into exit codes.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, readEnvironment, type Config } from '../lib/config.ts';
import { WarehouseError } from '../lib/errors.ts';
import { limitHeapGrowth } from '../lib/heap.ts';
import { createLogger, scrub, type Logger } from '../lib/logger.ts';
import { errorMessage, recordable, RECORD_CHARS, reportedError } from '../lib/recordable.ts';
import { UsageError, type CommandContext } from './context.ts';

const USAGE = `Usage: tesync <command> [options]

Commands:
  demo [--force]          sync the bundled simulator into the embedded warehouse and show it
  migrate                 apply the warehouse migrations (idempotent)
  sync [--source S] [--token SLUG]... [--only GROUP,...] [--full] [--wait] [--force]
                          one full walk of the configured sources, in this process
  status [--json] [--wide] [--max-age HOURS] [--max-unconfirmed HOURS]
                          freshness per source and resource group (exit 1 when stale)
  sql                     keep the embedded warehouse up; print its URL for psql and BI tools
  worker [--force]        run scheduled walks and queued jobs (BullMQ on REDIS_URL) until SIGTERM
  enqueue [--schedule ID | --only GROUP,...] [--wait] [--force]
                          queue a walk now for the running workers
  reset --redis [--dry-run] [--force]
                          remove every Redis key under TE_QUEUE_PREFIX (queues, budgets, run counters)
  export [--to DIR] [--as-of INSTANT] [--tables T,...] [--since DAY]
                          the warehouse as Parquet (see \`tesync export --help\`)
  sim [--port N] [...]    run the bundled upstream simulator (see \`tesync sim --help\`)

--force (demo, sync, worker, enqueue): write into a warehouse bound to another upstream,
rebinding it to the configured one (recorded in sync.upstream_binding_log).
Exit codes: 0 done, 1 could not complete, 2 bad configuration or command line,
130 or 143 stopped by Ctrl-C or SIGTERM (sync and demo close their run \`interrupted\`).
Configuration comes from the environment (or a .env file); see the README.`;

type Command = (ctx: CommandContext) => Promise<number>;

// Loaded on demand: a command pulls in only what it uses, so start-up stays quick.
const COMMANDS: Record<string, { load: () => Promise<Command>; needsConfig: boolean }> = {
  migrate: { load: async () => (await import('./migrate.ts')).runMigrate, needsConfig: true },
  sync: { load: async () => (await import('./sync.ts')).runSync, needsConfig: true },
  status: { load: async () => (await import('./status.ts')).runStatus, needsConfig: true },
  demo: { load: async () => (await import('./demo.ts')).runDemo, needsConfig: true },
  sql: { load: async () => (await import('./sql.ts')).runSql, needsConfig: true },
  sim: { load: async () => (await import('./sim.ts')).runSim, needsConfig: false },
  worker: { load: async () => (await import('./worker.ts')).runWorker, needsConfig: true },
  enqueue: { load: async () => (await import('./enqueue.ts')).runEnqueue, needsConfig: true },
  reset: { load: async () => (await import('./reset.ts')).runReset, needsConfig: true },
  export: { load: async () => (await import('./export.ts')).runExport, needsConfig: true },
};

/** Commands that draw a progress line on a terminal (src/cli/progress.ts). */
const SHOWS_PROGRESS = new Set(['sync', 'demo']);

export async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  const name = positionals[0];
  if (!name || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`tesync: unknown command "${name}"\n\n${USAGE}\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig(readEnvironment());
  } catch (err) {
    if (err instanceof ConfigError && command.needsConfig) {
      process.stderr.write(`tesync: configuration error: ${err.message}\n`);
      return 2;
    }
    if (!(err instanceof ConfigError)) throw err;
    // The simulator needs no configuration: run it with defaults.
    config = loadConfig({});
  }
  limitHeapGrowth();
  const logger = createLogger({ level: config.logLevel, secrets: config.secrets });
  const rest = argv.slice(argv.indexOf(name) + 1);
  // A command that shows progress on a terminal says so while its modules load (a second or
  // more), then its progress line takes over.
  const early = SHOWS_PROGRESS.has(name) && process.stderr.isTTY === true && !rest.some((a) => a === '--json' || a === '--help' || a === '-h');
  if (early) process.stderr.write(`starting tesync ${name}…`);
  try {
    const load = command.load();
    const run = await (early ? load.finally(() => process.stderr.write('\r\x1b[K')) : load);
    return await run({ config, logger, argv: rest });
  } catch (err) {
    return reportFailure(err, config, logger);
  }
}

/**
 * The most characters of an error's message on the command's last line: a few hundred of
 * another library's (a failed query's can run to kilobytes), more of tesync's own warehouse
 * errors, written to be read whole (a server that did not start, and what its log says).
 */
const PRINTED_CHARS = RECORD_CHARS;
const PRINTED_WAREHOUSE_CHARS = 2000;

/**
 * The exit code of a command that threw, its line said. The line is the error's message as it
 * may be shown (src/lib/recordable.ts): a failed query's driver error, never drizzle's message
 * with the query's parameters; secrets scrubbed, then control characters escaped and, but for
 * a configuration or usage error, cut (PRINTED_CHARS).
 */
export function reportFailure(err: unknown, config: Config, logger: Logger): number {
  const debug = config.logLevel === 'debug' || config.logLevel === 'trace';
  // Said whole: what to fix in the configuration or the command line.
  const message = recordable(scrub(errorMessage(err), config.secrets), Infinity);
  if (err instanceof ConfigError) {
    process.stderr.write(`tesync: configuration error: ${message}\n`);
    return 2;
  }
  // Node's parseArgs errors; other libraries' codes may be numbers (BullMQ's).
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
    process.stderr.write(`tesync: ${message}\n`);
    return 2;
  }
  const prefix = err instanceof WarehouseError ? 'warehouse' : 'error';
  process.stderr.write(`tesync: ${prefix}: ${recordable(message, err instanceof WarehouseError ? PRINTED_WAREHOUSE_CHARS : PRINTED_CHARS)}\n`);
  const said = reportedError(err);
  if (debug && said instanceof Error && said.stack) process.stderr.write(`${scrub(said.stack, config.secrets)}\n`);
  logger.flush?.();
  return 1;
}

// Run when executed as the entry point (bin/tesync.js imports this module).
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tesync: ${recordable(errorMessage(err), PRINTED_CHARS)}\n`);
    process.exitCode = 1;
  },
);
