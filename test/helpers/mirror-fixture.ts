// One simulator and one fresh warehouse for a test file or a `describe` block: the pair most
// tests mirror from and into. Called at collection time, it registers its own beforeAll and
// afterAll; the handle's getters are read inside hooks and tests.
import { afterAll, beforeAll } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';
import type { SyncOutcome } from '../../src/cli/sync-session.ts';
import type { Logger } from '../../src/lib/logger.ts';
import type { Source } from '../../src/resources/index.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { createTestWarehouse, type TestWarehouse } from './services.ts';
import { syncOnce, type SyncEnv } from './sync.ts';

export interface SimAndWarehouse {
  readonly sim: Simulator;
  readonly tw: TestWarehouse;
  /** `tw.warehouse` */
  readonly warehouse: Warehouse;
  /** `tw.databaseUrl`: for a `tesync` process or a connection of the test's own */
  readonly databaseUrl: string;
  /** `syncOnce` from this simulator into this warehouse */
  sync(logger: Logger, env: SyncEnv, sources: Source[], extra?: Parameters<typeof syncOnce>[5]): Promise<SyncOutcome>;
}

/**
 * Starts a simulator with `options` (or what the function returns when the hook runs, for
 * options known only then) and creates a fresh migrated warehouse, both at once; closes the
 * one and drops the other afterwards, whichever of them came up.
 */
export function useSimAndWarehouse(options: SimOptions | (() => SimOptions) = {}): SimAndWarehouse {
  let sim: Simulator | undefined;
  let tw: TestWarehouse | undefined;

  beforeAll(async () => {
    const [s, w] = await Promise.allSettled([startSimulator(typeof options === 'function' ? options() : options), createTestWarehouse()]);
    // Kept even when the other failed, so that afterAll closes it.
    if (s.status === 'fulfilled') sim = s.value;
    if (w.status === 'fulfilled') tw = w.value;
    if (s.status === 'rejected') throw s.reason;
    if (w.status === 'rejected') throw w.reason;
  });
  afterAll(async () => {
    const [s, w] = [sim, tw];
    sim = tw = undefined;
    const closed = await Promise.allSettled([s?.close(), w?.cleanup()]);
    const failed = closed.find((c) => c.status === 'rejected');
    if (failed) throw failed.reason;
  });

  // A value read at collection time, or after a failed setup, would be undefined: say why instead.
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useSimAndWarehouse: ${what} read outside its beforeAll..afterAll (read it in a hook or a test), or its setup failed`);
    return value;
  };
  return {
    get sim() {
      return ready(sim, 'sim');
    },
    get tw() {
      return ready(tw, 'tw');
    },
    get warehouse() {
      return ready(tw, 'warehouse').warehouse;
    },
    get databaseUrl() {
      return ready(tw, 'databaseUrl').databaseUrl;
    },
    sync(logger, env, sources, extra) {
      return syncOnce(ready(sim, 'sim'), ready(tw, 'warehouse').warehouse, logger, env, sources, extra);
    },
  };
}
