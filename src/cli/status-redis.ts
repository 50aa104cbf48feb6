// `tesync status`'s line about the workers' Redis, when REDIS_URL is set: one server or a
// Redis Cluster, and where the queues' keys are (on a cluster, their slot and the primary that
// serves it), or why that could not be told. Status is a health check of the warehouse: a
// Redis that does not answer is said, never a failure of the command.
import type { Config } from '../lib/config.ts';
import { redisPlace } from '../lib/redis-url.ts';
import { connectRedis } from '../upstream/redis/connect.ts';
import { keysPlaceLine, readKeysPlace, type KeysPlace } from '../upstream/redis/place.ts';
import { fitLine } from './status-format.ts';

export type QueuesPlace = KeysPlace | { where: string; error: string };

const STATUS_CONNECT_TIMEOUT_MS = 3000;

export async function readQueuesPlace(config: Pick<Config, 'redis'>): Promise<QueuesPlace | undefined> {
  const target = config.redis;
  if (!target) return undefined;
  try {
    const redis = await connectRedis(target, `${target.keyPrefix}:tesync-status`, { timeoutMs: STATUS_CONNECT_TIMEOUT_MS });
    try {
      return await readKeysPlace(redis, target);
    } finally {
      await redis.quit().catch(() => redis.disconnect());
    }
  } catch (err) {
    return { where: redisPlace(target), error: (err as Error).message };
  }
}

/** Pure: the place as status prints it, fitted to `width`. */
export function queuesPlaceLines(p: QueuesPlace, width: number): string[] {
  return fitLine(`queues (REDIS_URL): ${'error' in p ? p.error : keysPlaceLine(p)}`, width);
}
