// Lua scripts run on Redis, loaded once and called by their SHA.
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

export type LuaScript = (redis: Redis, keys: string[], args: (string | number)[]) => Promise<unknown>;

/** Loads a script on first use (EVALSHA, EVAL after a NOSCRIPT: a restarted or other server). */
export function luaScript(lua: string): LuaScript {
  let sha: string | undefined;
  return async (redis, keys, args) => {
    sha ??= (await redis.script('LOAD', lua)) as string;
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
