import type { CommandContext } from './context.ts';
import { openWarehouse } from '../store/connection.ts';

export async function runMigrate({ config, logger }: CommandContext): Promise<number> {
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    const started = Date.now();
    await warehouse.migrate();
    logger.info({ warehouse: warehouse.location, ms: Date.now() - started }, 'migrations applied');
    process.stdout.write(`Migrations applied to ${warehouse.location}.\n`);
    return 0;
  } finally {
    await warehouse.close();
  }
}
