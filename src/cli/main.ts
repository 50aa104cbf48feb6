// The composition root: parses the command line, loads configuration, builds clients and
// hands them to the command. The one place that turns errors into exit codes.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, readEnvironment, type Config } from '../lib/config.ts';
import { WarehouseError } from '../lib/errors.ts';
import { limitHeapGrowth } from '../lib/heap.ts';
import { pinEmbeddedPort } from '../store/server/embedded-server.ts';
import { createLogger, scrub, type Logger } from '../lib/logger.ts';
import { keepSecretsOut } from '../lib/secrets.ts';
import { errorMessage, recordable, RECORD_CHARS, reportedError } from '../lib/recordable.ts';
import { asksJson, COMMAND_SPECS, commandSpec, generatedHelp, topUsage } from './commands.ts';
import { UsageError } from './context.ts';
import { didYouMean, nearest, usageLine } from './did-you-mean.ts';

export async function main(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  // `tesync help sync` is `tesync sync --help`.
  if (positionals[0] === 'help' && positionals[1]) argv = [positionals[1], '--help'];
  const name = positionals[0] === 'help' && positionals[1] ? positionals[1] : positionals[0];
  const json = asksJson(argv);
  if (!name || name === 'help') {
    process.stdout.write(`${topUsage()}\n`);
    return name || argv.includes('--help') || argv.includes('-h') ? 0 : 2;
  }
  const command = commandSpec(name);
  if (!command) {
    const meant = didYouMean(nearest(name, COMMAND_SPECS.map((c) => c.name)));
    const line = `unknown command "${recordable(name, 60)}"${meant ? `; ${meant}` : ''}`;
    if (json) sayError(2, 'usage', line);
    else process.stderr.write(`tesync: ${line}\n\n${topUsage()}\n`);
    return 2;
  }
  const rest = argv.slice(argv.indexOf(name) + 1);
  let config: Config;
  try {
    config = loadConfig(readEnvironment());
  } catch (err) {
    // The simulator needs no configuration, and no command needs it to say its --help.
    const withoutConfig = !command.needsConfig || rest.includes('--help') || rest.includes('-h');
    if (!(err instanceof ConfigError) || !withoutConfig) return reportFailure(err, loadConfig({}), undefined, { command: name, json });
    config = loadConfig({});
  }
  // Every text this process records or prints is scrubbed of the configured secrets.
  keepSecretsOut(config.secrets);
  limitHeapGrowth();
  pinEmbeddedPort(config.embeddedPort);
  const logger = createLogger({ level: config.logLevel, secrets: config.secrets });
  // A command that shows progress on a terminal says so while its modules load (a second or
  // more), then its progress line takes over.
  const early = SHOWS_PROGRESS.has(name) && process.stderr.isTTY === true && !rest.some((a) => a === '--json' || a === '--help' || a === '-h');
  if (early) process.stderr.write(`starting tesync ${name}…`);
  try {
    if (command.help !== undefined && readsNoOptions(rest)) {
      process.stdout.write(`${generatedHelp(command)}\n`);
      return 0;
    }
    const load = command.load();
    const run = await (early ? load.finally(() => process.stderr.write('\r\x1b[K')) : load);
    return await run({ config, logger, argv: rest });
  } catch (err) {
    return reportFailure(err, config, logger, { command: name, json });
  }
}

/** Commands that draw a progress line on a terminal (src/cli/progress.ts). */
const SHOWS_PROGRESS = new Set(['sync', 'demo']);

/**
 * For a command that reads no options of its own (CommandSpec.help): whether `--help` was
 * asked; any other option or argument is refused as parseArgs refuses it for the others.
 */
function readsNoOptions(rest: string[]): boolean {
  return parseArgs({ args: rest, strict: true, options: { help: { type: 'boolean' } } }).values.help === true;
}

/** One JSON line on stderr: what a command run with `--json` says when it fails. */
function sayError(code: number, kind: 'configuration' | 'usage' | 'warehouse' | 'error', message: string, more: Record<string, string> = {}): void {
  process.stderr.write(`${JSON.stringify({ error: { code, kind, ...more, message } })}\n`);
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
export function reportFailure(err: unknown, config: Config, logger: Logger | undefined, how: { command?: string; json?: boolean } = {}): number {
  const debug = config.logLevel === 'debug' || config.logLevel === 'trace';
  // Said whole: what to fix in the configuration or the command line.
  const message = recordable(scrub(errorMessage(err), config.secrets), Infinity);
  if (err instanceof ConfigError) {
    if (how.json) sayError(2, 'configuration', message, { variable: err.variable });
    else process.stderr.write(`tesync: configuration error: ${message}\n`);
    return 2;
  }
  // Node's parseArgs errors; other libraries' codes may be numbers (BullMQ's).
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
    const line = usageLine(code, message, how.command);
    if (how.json) sayError(2, 'usage', line);
    else process.stderr.write(`tesync: ${line}\n`);
    return 2;
  }
  const warehouse = err instanceof WarehouseError;
  const said = reportedError(err);
  const cut = recordable(message, warehouse ? PRINTED_WAREHOUSE_CHARS : PRINTED_CHARS);
  const stack = debug && said instanceof Error && said.stack ? scrub(said.stack, config.secrets) : undefined;
  if (how.json) sayError(1, warehouse ? 'warehouse' : 'error', cut, stack ? { stack } : {});
  else {
    process.stderr.write(`tesync: ${warehouse ? 'warehouse' : 'error'}: ${cut}\n`);
    if (stack) process.stderr.write(`${stack}\n`);
  }
  logger?.flush?.();
  return 1;
}

/** How long a process whose command has ended may wait for its handles to close by themselves. */
const LINGER_MS = 2000;

/**
 * Runs this process's command line and ends the process with its exit code: bin/tesync.js's
 * one call. Importing this module runs nothing (a test imports its functions).
 */
export function runProcess(): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // The command is over and has closed what it opened. A connection a library opened after
      // its close (ioredis connects a worker's Redis Cluster client to a replica met during a
      // failover, after BullMQ closed it) would hold the process for ever: it goes with the exit.
      setTimeout(() => process.exit(code), LINGER_MS).unref();
    },
    (err: unknown) => {
      process.stderr.write(`tesync: ${recordable(errorMessage(err), PRINTED_CHARS)}\n`);
      process.exitCode = 1;
    },
  );
}
