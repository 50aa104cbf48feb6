// `tesync sql`: keeps the embedded Postgres server up and prints its connection URL for psql
// and BI tools, until Ctrl-C. With DATABASE_URL set there is nothing to serve: the user's
// Postgres is already there.
import { parseArgs } from 'node:util';
import { describePostgresUrl, openWarehouse } from '../store/connection.ts';
import { UsageError, untilSignal, type CommandContext } from './context.ts';
import { terminalLogger } from './progress.ts';

const HELP = `Usage: tesync sql

Keeps the embedded warehouse's Postgres server (TE_DATA_DIR) up until Ctrl-C
and prints its connection URL, password included, for psql and BI tools:
  psql "postgres://tesync:<password>@127.0.0.1:<port>/tesync"
It is a real Postgres: any number of sessions, transactions, cancel. Syncs,
demos and status may run beside it; the server stops when the last of them
(and this) has left.`;

export async function runSql({ config, logger: base, argv }: CommandContext): Promise<number> {
  // A person reads its lines: on a terminal, in words (its URL is not logged either way).
  const logger = terminalLogger(base);
  const { values } = parseArgs({ args: argv, strict: true, options: { help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (config.databaseUrl) {
    throw new UsageError(`DATABASE_URL is set: query Postgres at ${describePostgresUrl(config.databaseUrl)} directly; \`tesync sql\` serves only the embedded warehouse`);
  }
  const warehouse = await openWarehouse({ dataDir: config.dataDir });
  try {
    await warehouse.migrate();
    // The URL carries the password: printed for the user, never logged.
    process.stdout.write(`Serving ${warehouse.location}\n  psql "${warehouse.embeddedUrl}"\nCtrl-C stops serving (the server stops once no other tesync command uses it).\n`);
    const signal = await untilSignal();
    logger.info({ signal }, 'sql: no longer keeping the embedded server up');
    return 0;
  } finally {
    await warehouse.close();
  }
}
