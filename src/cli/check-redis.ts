// `tesync check`'s look at REDIS_URL, when set: the workers' Redis answers, as what the URL
// says it is (one server, or a Redis Cluster whose slots are all served), and where the
// prefix's keys are: on a cluster, the slot of its hash tag and the primary that serves it.
import { ConfigError, type Config } from '../lib/config.ts';
import { connectRedis } from '../upstream/redis/connect.ts';
import { keysPlaceLine, readKeysPlace } from '../upstream/redis/place.ts';
import type { CheckResult } from './check-upstream.ts';

const CHECK_CONNECT_TIMEOUT_MS = 5000;

export async function checkRedis(config: Pick<Config, 'redis'>): Promise<CheckResult[]> {
  const target = config.redis;
  if (!target) return [];
  const result = (status: CheckResult['status'], message: string, configuration = false): CheckResult[] => [
    { check: 'redis', variable: 'REDIS_URL', status, message, ...(configuration ? { configuration: true as const } : {}) },
  ];
  let redis;
  try {
    redis = await connectRedis(target, `${target.keyPrefix}:tesync-check`, { timeoutMs: CHECK_CONNECT_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof ConfigError) return result('failed', err.problem, true);
    return result('failed', (err as Error).message);
  }
  try {
    const place = await readKeysPlace(redis, target);
    const line = keysPlaceLine(place);
    if (place.cluster && place.state !== 'ok') return result('failed', `${line}: the cluster is down (not every slot is served), and the workers wait until it is up`);
    if (place.cluster && !place.primary) return result('failed', `${line}: no primary serves the prefix's slot`);
    return result('ok', line);
  } catch (err) {
    return result('failed', `${target.cluster ? 'Redis Cluster' : 'Redis'} reached, but could not say where the keys are: ${(err as Error).message}`);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
