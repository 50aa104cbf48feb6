// `tesync reset --queues`: removes what the workers keep under TE_QUEUE_PREFIX in their queue
// backend (Redis keys `<prefix>:...`, or the Postgres schema `bullmq_<prefix>` and the prefix's
// budget and run-ledger rows), for a deployment that was stopped for good, or to start its
// queues and budgets afresh. Refuses while tesync processes still use the prefix, naming what
// holds each connection (what they keep would come back half-made); a dry run refuses nothing:
// it counts, and says what a reset now would be refused for.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../lib/config.ts';
import { queueBackendKind, type QueueBackendKind } from '../runners/bullmq/backend.ts';
import { countQueueJobs, queueSchema, queueSessions, removeQueues } from '../runners/bullmq/postgres-backend.ts';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import { RunDriver } from '../engine/run/run-driver.ts';
import { countPrefixKeys, prefixClients, prefixPattern, removePrefixKeys, type PrefixClient } from '../runners/bullmq/prefix-keys.ts';
import { describeRedis } from '../runners/bullmq/redis-backend.ts';
import { connectRedis } from '../upstream/redis/connect.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync reset --queues [--dry-run] [--force]

Removes what the workers keep under TE_QUEUE_PREFIX in their queue backend: the
BullMQ queues, their jobs and job schedulers, the shared rate budgets and the
run counters. With REDIS_URL set: every Redis key "<prefix>:..."; without it:
the Postgres schema bullmq_<prefix> and the prefix's rows of sync.rate_budgets,
sync.run_counts and sync.run_jobs. Other prefixes are left alone. Runs of these
workers still "running" in the warehouse lost their jobs with the queues: they
are closed as failed (nothing else in the warehouse changes). A worker started
later makes its queues again and registers its schedules.
Refused while tesync processes use the prefix (workers, enqueue --wait, sync,
status --serve), naming what holds each connection.
  --queues   what to reset (required)
  --redis    the same, refused unless REDIS_URL is set (its name before the
             Postgres backend)
  --dry-run  count, remove nothing, refuse nothing: says what a reset now would
             be refused for
  --force    remove even while tesync processes are connected under the prefix
             or hold job locks (or when Redis does not allow CLIENT LIST)`;

export async function runReset({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      queues: { type: 'boolean', default: false },
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
  if (!values.queues && !values.redis) throw new UsageError('reset: say what to reset: --queues (see tesync reset --help)');
  const kind = queueBackendKind(config);
  if (values.redis && kind !== 'redis') throw new UsageError('reset --redis: REDIS_URL is not set, so the queues are in the warehouse\'s Postgres: use --queues');
  const options = { dryRun: values['dry-run'], force: values.force };
  return kind === 'redis' ? resetRedis(config, config.redisUrl!, options) : resetPostgres(config, options);
}

interface ResetOptions {
  dryRun: boolean;
  force: boolean;
}

async function resetRedis(config: Config, url: string, options: ResetOptions): Promise<number> {
  // As the keys carry it: braced on a Redis Cluster.
  const prefix = config.redis!.keyPrefix;
  const where = describeRedis(url);
  const ownName = `tesync-reset:${prefix}`;
  const redis = await connectRedis(config.redis!, ownName);
  try {
    const { keys, locks } = await countPrefixKeys(redis, prefix);
    let refusal: Refusal | undefined;
    if (!options.force) {
      const listed = await prefixClients(redis, prefix, ownName);
      const lines =
        'error' in listed ? [`could not list the connections to Redis (CLIENT LIST: ${listed.error}), so cannot tell whether workers still use the prefix`] : connectionLines(listed.clients, prefix);
      if (locks > 0) lines.push(`${locks} job lock${locks === 1 ? '' : 's'} held (a worker is running jobs, or died less than TE_WORKER_LOCK_MS ago)`);
      const holders = 'error' in listed ? [] : holdersOf(listed.clients, prefix);
      if (lines.length > 0) refusal = { what: `the Redis keys under "${prefix}:" at ${where}`, using: 'this Redis', lines, holders };
    }
    if (options.dryRun) {
      process.stdout.write(`${keys} Redis key${keys === 1 ? '' : 's'} under "${prefix}:" at ${where} (${prefixPattern(prefix)}); nothing removed (--dry-run)\n`);
      if (refusal) wouldRefuse(refusal);
      return 0;
    }
    if (refusal) return refuse(refusal);
    const removed = await removePrefixKeys(redis, prefix);
    process.stdout.write(
      removed === 0
        ? `No Redis keys under "${prefix}:" at ${where}; nothing to remove\n`
        : `Removed ${removed} Redis key${removed === 1 ? '' : 's'} under "${prefix}:" at ${where} (queues, job schedulers, rate budgets, run counters)\n`,
    );
    await closeRunsOfRemovedJobs(config, config.worker.queuePrefix, 'redis');
    return 0;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

async function resetPostgres(config: Config, options: ResetOptions): Promise<number> {
  const prefix = config.worker.queuePrefix;
  const schema = queueSchema(prefix);
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, maxConnections: 1 });
  try {
    const where = `the schema ${schema} of ${warehouse.location}`;
    let refusal: Refusal | undefined;
    if (!options.force) {
      const sessions = await queueSessions(warehouse, prefix);
      const lines = connectionLines(sessions, prefix);
      if (lines.length > 0) refusal = { what: `the queues of "${prefix}" in ${where}`, using: 'this warehouse', lines, holders: holdersOf(sessions, prefix) };
    }
    const { exists, jobs } = await countQueueJobs(warehouse, prefix);
    if (options.dryRun) {
      process.stdout.write(exists ? `${jobs} job${jobs === 1 ? '' : 's'} in ${where}; nothing removed (--dry-run)\n` : `No queues of "${prefix}" in ${warehouse.location} (no schema ${schema}); nothing removed (--dry-run)\n`);
      if (refusal) wouldRefuse(refusal);
      return 0;
    }
    if (refusal) return refuse(refusal);
    await removeQueues(warehouse, prefix);
    process.stdout.write(
      exists
        ? `Removed ${where} with its ${jobs} job${jobs === 1 ? '' : 's'} (queues, job schedulers), and the prefix's rate budgets and run counters\n`
        : `No queues of "${prefix}" in ${warehouse.location} (no schema ${schema}); the prefix's rate budgets and run counters removed\n`,
    );
    const closed = (await RunDriver.closeAbandoned(warehouse, { of: 'workers', prefix, backend: 'postgres' })).length;
    if (closed > 0) process.stdout.write(`Closed ${closed} run${closed === 1 ? '' : 's'} of these workers as failed in ${warehouse.location}: their jobs were among those removed\n`);
    return 0;
  } finally {
    await warehouse.close();
  }
}

/**
 * Pure: the command that holds a connection, by the name tesync gave it (src/runners/bullmq
 * names the workers', sync-budget.ts the budgets' of sync and status --serve); undefined when
 * the name does not say.
 */
export function holderOf(client: Pick<PrefixClient, 'name' | 'worker'>, prefix: string): string | undefined {
  if (client.worker) return 'tesync worker';
  const rest = client.name.startsWith(`${prefix}:`) ? client.name.slice(prefix.length + 1) : undefined;
  if (rest === undefined) return undefined;
  if (rest === 'tesync') return 'tesync worker';
  if (rest === 'tesync-enqueue') return 'tesync enqueue';
  if (rest === 'tesync-sync' || rest.startsWith('budget sync ')) return 'tesync sync';
  if (rest === 'tesync-status-serve' || rest.startsWith('budget status-serve ')) return 'tesync status --serve';
  return undefined;
}

/** Pure: the commands holding the connections, each once, in the order found. */
export function holdersOf(clients: readonly Pick<PrefixClient, 'name' | 'worker'>[], prefix: string): string[] {
  return [...new Set(clients.map((c) => holderOf(c, prefix)).filter((h): h is string => h !== undefined))];
}

/** The lines naming the connections that still use the prefix, and what holds each (none: none). */
function connectionLines(clients: readonly PrefixClient[], prefix: string): string[] {
  if (clients.length === 0) return [];
  const workers = clients.filter((c) => c.worker).length;
  const lines = [`${clients.length} connection${clients.length === 1 ? '' : 's'} under the prefix (${workers} from workers):`];
  for (const c of clients.slice(0, 10)) {
    const holder = holderOf(c, prefix);
    lines.push(`  ${c.name} from ${c.addr}, connected ${c.ageS}s ago${holder ? ` (${holder})` : ''}`);
  }
  if (clients.length > 10) lines.push(`  ... and ${clients.length - 10} more`);
  return lines;
}

/** Why a reset is refused: what is in use, where, the lines naming it, and the commands to stop. */
interface Refusal {
  what: string;
  using: string;
  lines: string[];
  holders: string[];
}

/** Pure: what to stop, naming the commands found (a worker, enqueue, sync, status --serve), or every kind that could hold one. */
export function stopAdvice(holders: readonly string[], using: string): string {
  const named = holders.length > 0 ? holders.join(', ') : `the workers, and any tesync enqueue --wait, sync or status --serve using ${using}`;
  return `Stop what holds them (${named}), then run it again, or add --force.`;
}

function refuse(r: Refusal): number {
  process.stderr.write(`tesync: reset refused: tesync still uses ${r.what}:\n${r.lines.map((l) => `  ${l}\n`).join('')}${stopAdvice(r.holders, r.using)}\n`);
  return 1;
}

/** A dry run refuses nothing: it says what a reset now would be refused for, on stdout beside its count. */
function wouldRefuse(r: Refusal): void {
  process.stdout.write(`A reset now would be refused: tesync still uses ${r.what}:\n${r.lines.map((l) => `  ${l}\n`).join('')}${stopAdvice(r.holders, r.using)}\n`);
}

/**
 * The runs of the prefix's workers still `running` lost their jobs with the keys: they are
 * closed as failed, so that the warehouse does not show them running for ever. Skipped (one
 * line) when there is no warehouse yet, or it cannot be reached: a worker started later under
 * the prefix closes them too.
 */
async function closeRunsOfRemovedJobs(config: Config, prefix: string, backend: QueueBackendKind): Promise<void> {
  if (!config.databaseUrl && !existsSync(config.dataDir)) return;
  let warehouse: Warehouse | undefined;
  try {
    warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, maxConnections: 1 });
    const closed = (await RunDriver.closeAbandoned(warehouse, { of: 'workers', prefix, backend })).length;
    if (closed > 0) process.stdout.write(`Closed ${closed} run${closed === 1 ? '' : 's'} of these workers as failed in ${warehouse.location}: their jobs were among the keys removed\n`);
  } catch (err) {
    process.stdout.write(`Runs of these workers still running in the warehouse were not closed (${(err as Error).message}); a worker started under "${prefix}" closes them\n`);
  } finally {
    await warehouse?.close();
  }
}
