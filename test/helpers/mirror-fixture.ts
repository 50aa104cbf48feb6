// One simulator and one fresh warehouse for a test file or a `describe` block: the pair most
// tests mirror from and into. Called at collection time, it registers its own beforeAll and
// afterAll; the handle's getters are read inside hooks and tests.
import { afterAll, beforeAll } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';
import type { SyncOutcome } from '../../src/cli/sync-session.ts';
import type { Logger } from '../../src/lib/logger.ts';
import type { Source } from '../../src/resources/index.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { patience } from './patience.ts';
import { postgresWarehouses, type WarehouseServer } from './servers.ts';
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

export interface ServerSimAndWarehouse extends SimAndWarehouse {
  /** The server the warehouse is on: for more databases or warehouses on it. */
  readonly server: WarehouseServer;
}

/** useSimAndWarehouseOn the test's Postgres. */
export function useSimAndWarehouse(options: SimOptions | (() => SimOptions) = {}): SimAndWarehouse {
  return useSimAndWarehouseOn(postgresWarehouses, options);
}

/**
 * On the server `start` gives (one of BOTH_SERVERS): starts the server and a simulator with
 * `options` (or what the function returns when the hook runs, for options known only then),
 * then a fresh migrated warehouse on that server; afterwards drops the warehouse, then closes
 * the simulator and the server, whichever of them came up.
 */
export function useSimAndWarehouseOn(start: () => Promise<WarehouseServer>, options: SimOptions | (() => SimOptions) = {}): ServerSimAndWarehouse {
  let server: WarehouseServer | undefined;
  let sim: Simulator | undefined;
  let tw: TestWarehouse | undefined;

  beforeAll(async () => {
    const [s, v] = await Promise.allSettled([startSimulator(typeof options === 'function' ? options() : options), start()]);
    // Kept even when the other failed, so that afterAll closes it.
    if (s.status === 'fulfilled') sim = s.value;
    if (v.status === 'fulfilled') server = v.value;
    if (s.status === 'rejected') throw s.reason;
    if (v.status === 'rejected') throw v.reason;
    tw = await server!.warehouse();
  }, patience(120_000));
  afterAll(async () => {
    const [s, v, w] = [sim, server, tw];
    sim = server = tw = undefined;
    const dropped = await Promise.allSettled([w?.cleanup()]);
    const closed = await Promise.allSettled([s?.close(), v?.close()]);
    const failed = [...dropped, ...closed].find((c) => c.status === 'rejected');
    if (failed) throw failed.reason;
  }, patience(60_000));

  // A value read at collection time, or after a failed setup, would be undefined: say why instead.
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useSimAndWarehouse: ${what} read outside its beforeAll..afterAll (read it in a hook or a test), or its setup failed`);
    return value;
  };
  return {
    get server() {
      return ready(server, 'server');
    },
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

/**
 * A fresh, migrated warehouse on the test's Postgres for the block it is called in, without a
 * simulator: created before its tests, dropped after. What it returns stands for that
 * warehouse once its beforeAll has run (`const w = useTestWarehouse()`).
 */
export function useTestWarehouse(): Warehouse {
  let tw: TestWarehouse | undefined;
  beforeAll(async () => {
    tw = await createTestWarehouse();
  }, patience(120_000));
  afterAll(async () => {
    const w = tw;
    tw = undefined;
    await w?.cleanup();
  });
  return new Proxy({} as Warehouse, {
    get(_t, key) {
      if (!tw) throw new Error('useTestWarehouse: its warehouse is used outside the tests of the block that asked for it');
      const v: unknown = Reflect.get(tw.warehouse, key);
      return typeof v === 'function' ? v.bind(tw.warehouse) : v;
    },
  });
}
