import type { CommandContext } from './context.ts';
import { openWarehouse } from '../store/connection.ts';
import { migrateQueueBackend } from '../runners/bullmq/open-backend.ts';

export async function runMigrate({ config, logger }: CommandContext): Promise<number> {
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    const started = Date.now();
    await warehouse.migrate();
    // The workers' queues, when they are in this Postgres (REDIS_URL unset).
    const queues = await migrateQueueBackend({ config, warehouse });
    logger.info({ warehouse: warehouse.location, queues, ms: Date.now() - started }, 'migrations applied');
    process.stdout.write(`Migrations applied to ${warehouse.location}${queues ? `, and to ${queues}` : ''}.\n`);
    return 0;
  } finally {
    await warehouse.close();
  }
}
