// `tesync reset --redis`: removes what tesync keeps in Redis under TE_QUEUE_PREFIX, for a
// deployment that was stopped for good (or to start its queues and budgets afresh). Refuses
// while tesync processes still use the prefix: their keys would come back half-made.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../lib/config.ts';
import { abandonRunsOfPrefix } from '../runners/bullmq/lost-runs.ts';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import { countPrefixKeys, prefixClients, prefixPattern, removePrefixKeys } from '../runners/bullmq/prefix-keys.ts';
import { connectRedis, redisOptions } from '../runners/bullmq/queues.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync reset --redis [--dry-run] [--force]

Removes every Redis key under TE_QUEUE_PREFIX (keys named "<prefix>:..."): the BullMQ queues,
their jobs and job schedulers, the shared rate budgets and the run counters. Keys of other
prefixes are left alone. Runs of these workers still "running" in the warehouse lost their jobs
with the keys: they are closed as failed (nothing else in the warehouse changes). A worker
started later registers its schedules again.
  --redis    what to reset (required; Redis is the only thing reset removes)
  --dry-run  count the keys, remove nothing
  --force    remove even while tesync processes are connected under the prefix or hold job
             locks (or when Redis does not allow CLIENT LIST)`;

export async function runReset({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      redis: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (!values.redis) throw new UsageError('reset: say what to reset: --redis (see tesync reset --help)');
  const prefix = config.worker.queuePrefix;
  const where = describeRedis(config.redisUrl);
  const ownName = `tesync-reset:${prefix}`;
  const redis = await connectRedis(redisOptions(config.redisUrl), config.redisUrl, ownName);
  try {
    const { keys, locks } = await countPrefixKeys(redis, prefix);
    if (!values.force) {
      const refusal: string[] = [];
      const listed = await prefixClients(redis, prefix, ownName);
      if ('error' in listed) {
        refusal.push(`could not list the connections to Redis (CLIENT LIST: ${listed.error}), so cannot tell whether workers still use the prefix`);
      } else if (listed.clients.length > 0) {
        const workers = listed.clients.filter((c) => c.worker).length;
        refusal.push(`${listed.clients.length} connection${listed.clients.length === 1 ? '' : 's'} under the prefix (${workers} from workers):`);
        for (const c of listed.clients.slice(0, 10)) refusal.push(`  ${c.name} from ${c.addr}, connected ${c.ageS}s ago`);
        if (listed.clients.length > 10) refusal.push(`  ... and ${listed.clients.length - 10} more`);
      }
      if (locks > 0) refusal.push(`${locks} job lock${locks === 1 ? '' : 's'} held (a worker is running jobs, or died less than TE_WORKER_LOCK_MS ago)`);
      if (refusal.length > 0) {
        process.stderr.write(
          `tesync: reset refused: tesync still uses the Redis keys under "${prefix}:" at ${where}:\n${refusal.map((l) => `  ${l}\n`).join('')}` +
            `Stop the workers (and any tesync enqueue --wait or sync using this Redis) and run it again, or add --force.\n`,
        );
        return 1;
      }
    }
    if (values['dry-run']) {
      process.stdout.write(`${keys} Redis key${keys === 1 ? '' : 's'} under "${prefix}:" at ${where} (${prefixPattern(prefix)}); nothing removed (--dry-run)\n`);
      return 0;
    }
    const removed = await removePrefixKeys(redis, prefix);
    process.stdout.write(
      removed === 0
        ? `No Redis keys under "${prefix}:" at ${where}; nothing to remove\n`
        : `Removed ${removed} Redis key${removed === 1 ? '' : 's'} under "${prefix}:" at ${where} (queues, job schedulers, rate budgets, run counters)\n`,
    );
    await closeRunsOfRemovedJobs(config, prefix);
    return 0;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/**
 * The runs of the prefix's workers still `running` lost their jobs with the keys: they are
 * closed as failed, so that the warehouse does not show them running for ever. Skipped (one
 * line) when there is no warehouse yet, or it cannot be reached: a worker started later under
 * the prefix closes them too.
 */
async function closeRunsOfRemovedJobs(config: Config, prefix: string): Promise<void> {
  if (!config.databaseUrl && !existsSync(config.dataDir)) return;
  let warehouse: Warehouse | undefined;
  try {
    warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 1 });
    const closed = await abandonRunsOfPrefix(warehouse, prefix);
    if (closed > 0) process.stdout.write(`Closed ${closed} run${closed === 1 ? '' : 's'} of these workers as failed in ${warehouse.location}: their jobs were among the keys removed\n`);
  } catch (err) {
    process.stdout.write(`Runs of these workers still running in the warehouse were not closed (${(err as Error).message}); a worker started under "${prefix}" closes them\n`);
  } finally {
    await warehouse?.close();
  }
}

/** host:port/db, never the password. */
function describeRedis(url: string): string {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  return `${u.hostname}:${u.port || 6379}${db ? `/${db}` : ''}`;
}
