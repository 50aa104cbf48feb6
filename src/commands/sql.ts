// `tesync sql`: serves the embedded PGlite warehouse over the Postgres wire protocol, so
// psql and BI tools can query it. With DATABASE_URL set there is nothing to serve: the
// user's Postgres already speaks the protocol.
import { parseArgs } from 'node:util';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { describePostgresUrl, openWarehouse } from '../warehouse/connection.ts';
import { UsageError, untilSignal, type CommandContext } from './context.ts';

const HELP = `Usage: tesync sql [--port 5433] [--host 127.0.0.1]

Serves the embedded warehouse (TE_DATA_DIR) to Postgres clients until Ctrl-C:
  psql "postgres://postgres@127.0.0.1:5433/postgres"
Clients share one session and their queries run one at a time: fine for BI reads. Stop
syncs first: the embedded warehouse has one owning process.`;

export async function runSql({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { port: { type: 'string', default: '5433' }, host: { type: 'string', default: '127.0.0.1' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (config.databaseUrl) {
    throw new UsageError(`DATABASE_URL is set: query Postgres at ${describePostgresUrl(config.databaseUrl)} directly; \`tesync sql\` serves only the embedded warehouse`);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number');
  const warehouse = await openWarehouse({ dataDir: config.dataDir, embeddedInProcess: true });
  try {
    await warehouse.migrate();
    const server = new PGLiteSocketServer({ db: warehouse.embedded!, port, host: values.host, maxConnections: 16 });
    await server.start();
    const where = server.getServerConn();
    process.stdout.write(`Serving ${warehouse.location} on ${where}\n  psql "postgres://postgres@${where}/postgres"\nCtrl-C stops it.\n`);
    const signal = await untilSignal();
    logger.info({ signal }, 'sql server stopping');
    await server.stop();
    return 0;
  } finally {
    await warehouse.close();
  }
}
