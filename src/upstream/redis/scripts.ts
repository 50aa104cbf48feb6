// Lua scripts run on Redis, called by their SHA. Every script's keys are of one slot (a Redis
// Cluster routes it by its first key and refuses keys of two slots: CROSSSLOT), which tesync's
// keys are: all of them share the prefix's hash tag on a cluster (src/lib/redis-url.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisClient } from './client.ts';

export type LuaScript = (redis: RedisClient, keys: string[], args: (string | number)[]) => Promise<unknown>;

/**
 * EVALSHA of the script's SHA, worked out here; EVAL after a NOSCRIPT, which loads it on the
 * node that answered: a server that restarted, a replica just promoted, a cluster's node
 * never sent it before. No SCRIPT LOAD, which a cluster would send to a node of its choice.
 */
export function luaScript(lua: string): LuaScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      return redis.eval(lua, keys.length, ...keys, ...args);
    }
  };
}

/**
 * A script kept as a `.lua` file beside the module that runs it (its header says what KEYS and
 * ARGV are): `luaFile(new URL('./name.lua', import.meta.url))`. Read on first use.
 */
export function luaFile(file: URL): LuaScript {
  let script: LuaScript | undefined;
  return (redis, keys, args) => {
    script ??= luaScript(readFileSync(file, 'utf8'));
    return script(redis, keys, args);
  };
}
