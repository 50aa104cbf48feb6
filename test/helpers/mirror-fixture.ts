// Where every test gets its warehouses, databases and simulators (issue 57: one fixture style).
// Each function registers its own setup and cleanup with vitest, so no test file keeps a list
// of what to drop. Two lifetimes:
//
// - a block's: `use*`, called at collection time in a file or a `describe`; made in its
//   beforeAll, removed in its afterAll, after the afterAll hooks the block registers later
//   (vitest runs them last registered first). Handles are read inside hooks and tests.
//   useSimAndWarehouse(On), useTestWarehouse, useTestDatabase, useSimulator, useWarehouseServer.
// - a case's: `fresh*`, awaited in a test or a beforeEach; removed when the case ends
//   (onTestFinished, after the afterEach hooks), pass or fail. A concurrent test passes its own
//   context as `test`: vitest tracks no current test across concurrent ones.
//   freshWarehouse, freshDatabase, freshSimAndWarehouse.
//
// On the test's Postgres unless `on` names another server (servers.ts: the embedded one).
import { afterAll, beforeAll, onTestFinished, type TestContext } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';
import type { SyncOutcome } from '../../src/cli/sync-session.ts';
import type { Logger } from '../../src/lib/logger.ts';
import type { Source } from '../../src/resources/index.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { patience } from './patience.ts';
import { postgresWarehouses, type WarehouseServer } from './servers.ts';
import { warehouseIn, type TestDatabase, type TestWarehouse } from './services.ts';
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
  /** The server the warehouse is on: for more databases or warehouses on it (`fresh*({ on })`). */
  readonly server: WarehouseServer;
}

/** Starts a server (one of BOTH_SERVERS' functions): a block's, closed after it. */
export type ServerStart = () => Promise<WarehouseServer>;

/**
 * Where a block's warehouse or database goes: the test's Postgres (none given); a server of the
 * block's own (a ServerStart: started before it, closed after); or an outer block's (its
 * useWarehouseServer or useSimAndWarehouseOn handle: left to that block).
 */
export type BlockServer = ServerStart | { readonly server: WarehouseServer };

/** The server `on` names, and whether the block closes it. */
async function serverOf(on: BlockServer | undefined): Promise<{ server: WarehouseServer; owned: boolean }> {
  if (on === undefined) return { server: await postgresWarehouses(), owned: true };
  if (typeof on === 'function') return { server: await on(), owned: true };
  return { server: on.server, owned: false };
}

/**
 * What database a warehouse is in. By default a copy of the migrated template, which
 * `migrate()` finds in step; `empty`: a new, empty database, which `migrate()` migrates from
 * nothing (the path a first `tesync sync` takes); `migrate: false`: opened and left as it is.
 * `maxConnections`: its pool's size (5).
 */
export interface WarehouseKind {
  empty?: boolean;
  migrate?: boolean;
  maxConnections?: number;
}

/** Where a case's cleanup goes: its own context's onTestFinished in a concurrent test. */
export type CaseOptions = { test?: Pick<TestContext, 'onTestFinished'> };

// A value read at collection time, or after a failed setup, would be undefined: say why instead.
function ready<T>(value: T | undefined, fixture: string, what: string): T {
  if (value === undefined) throw new Error(`${fixture}: ${what} read outside its beforeAll..afterAll (read it in a hook or a test), or its setup failed`);
  return value;
}

/** Throws the first failure among settled cleanups (each ran whatever the others did). */
function throwFirst(...settled: PromiseSettledResult<unknown>[][]): void {
  const failed = settled.flat().find((c) => c.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Registers a cleanup for the end of the case running now, before anything is made (a fixture
 * called where no case runs throws, leaving nothing behind); `keep(made)` hands it what to clean
 * and returns `made` with a `cleanup()` that runs once, whoever calls it first.
 */
function atCaseEnd(options: CaseOptions) {
  let cleanup: (() => Promise<void>) | undefined;
  let done: Promise<void> | undefined;
  const once = () => (done ??= cleanup?.() ?? Promise.resolve());
  (options.test?.onTestFinished ?? onTestFinished)(once, patience(60_000));
  return <T extends { cleanup(): Promise<void> }>(made: T): T => {
    cleanup = () => made.cleanup();
    return { ...made, cleanup: once };
  };
}

const warehouseOn = async (server: WarehouseServer, kind: WarehouseKind) => warehouseIn(await server.database({ migrated: !kind.empty }), { migrate: kind.migrate, maxConnections: kind.maxConnections });

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
export function useSimAndWarehouseOn(start: ServerStart, options: SimOptions | (() => SimOptions) = {}): ServerSimAndWarehouse {
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
    // The warehouse first: the embedded server it is on goes after it.
    const dropped = await Promise.allSettled([w?.cleanup()]);
    throwFirst(dropped, await Promise.allSettled([s?.close(), v?.close()]));
  }, patience(60_000));

  const fixture = 'useSimAndWarehouse';
  return {
    get server() {
      return ready(server, fixture, 'server');
    },
    get sim() {
      return ready(sim, fixture, 'sim');
    },
    get tw() {
      return ready(tw, fixture, 'tw');
    },
    get warehouse() {
      return ready(tw, fixture, 'warehouse').warehouse;
    },
    get databaseUrl() {
      return ready(tw, fixture, 'databaseUrl').databaseUrl;
    },
    sync(logger, env, sources, extra) {
      return syncOnce(ready(sim, fixture, 'sim'), ready(tw, fixture, 'warehouse').warehouse, logger, env, sources, extra);
    },
  };
}

/** A block's server (one of BOTH_SERVERS' starts), for what its blocks and cases make on it (`on`); closed after the block. */
export function useWarehouseServer(start: ServerStart): { readonly server: WarehouseServer } {
  let server: WarehouseServer | undefined;
  beforeAll(async () => {
    server = await start();
  }, patience(120_000));
  afterAll(async () => {
    const v = server;
    server = undefined;
    await v?.close();
  }, patience(60_000));
  return {
    get server() {
      return ready(server, 'useWarehouseServer', 'server');
    },
  };
}

/** A block's simulator with `options`, without a warehouse (the block's cases make their own). */
export function useSimulator(options: SimOptions | (() => SimOptions) = {}): { readonly sim: Simulator } {
  let sim: Simulator | undefined;
  beforeAll(async () => {
    sim = await startSimulator(typeof options === 'function' ? options() : options);
  }, patience(120_000));
  afterAll(async () => {
    const s = sim;
    sim = undefined;
    await s?.close();
  });
  return {
    get sim() {
      return ready(sim, 'useSimulator', 'sim');
    },
  };
}

/** A block's warehouse: the warehouse itself, and where it is (for a `tesync` process or a connection of the test's own). */
export type BlockWarehouse = Warehouse & { readonly databaseUrl: string };

/**
 * A fresh warehouse (of `kind`) for the block it is called in, without a simulator, on the
 * test's Postgres or on `on` (BlockServer): created before its tests, dropped after. What it
 * returns stands for that warehouse once its beforeAll has run (`const w = useTestWarehouse()`);
 * call it once per warehouse the block needs.
 */
export function useTestWarehouse(options: WarehouseKind & { on?: BlockServer } = {}): BlockWarehouse {
  let at: { server: WarehouseServer; owned: boolean } | undefined;
  let tw: TestWarehouse | undefined;
  beforeAll(async () => {
    at = await serverOf(options.on);
    tw = await warehouseOn(at.server, options);
  }, patience(120_000));
  afterAll(async () => {
    const [w, v] = [tw, at];
    tw = at = undefined;
    const dropped = await Promise.allSettled([w?.cleanup()]);
    throwFirst(dropped, await Promise.allSettled([v?.owned ? v.server.close() : undefined]));
  }, patience(60_000));
  const made = () => ready(tw, 'useTestWarehouse', 'its warehouse');
  const get = (key: string | symbol): unknown => {
    if (key === 'databaseUrl') return made().databaseUrl;
    const v: unknown = Reflect.get(made().warehouse, key);
    return typeof v === 'function' ? v.bind(made().warehouse) : v;
  };
  // The warehouse's own keys too, so that `{ ...w, query }` copies it as it would the warehouse.
  return new Proxy({} as BlockWarehouse, {
    get: (_t, key) => get(key),
    ownKeys: () => [...Reflect.ownKeys(made().warehouse), 'databaseUrl'],
    getOwnPropertyDescriptor: (_t, key) => (key === 'databaseUrl' || Object.hasOwn(made().warehouse, key) ? { configurable: true, enumerable: true, value: get(key) } : undefined),
  });
}

/** A block's database, as a `tesync` process or a connection of the test's own reaches it. */
export interface BlockDatabase {
  readonly databaseUrl: string;
  readonly name: string;
}

/**
 * A new database for the block it is called in, with no warehouse open on it: empty, or
 * (`migrated`) as `migrate()` leaves one; on the test's Postgres or on `on` (BlockServer).
 * Created before its tests, dropped after.
 */
export function useTestDatabase(options: { migrated?: boolean; on?: BlockServer } = {}): BlockDatabase {
  let at: { server: WarehouseServer; owned: boolean } | undefined;
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    at = await serverOf(options.on);
    db = await at.server.database({ migrated: options.migrated });
  }, patience(120_000));
  afterAll(async () => {
    const [d, v] = [db, at];
    db = at = undefined;
    const dropped = await Promise.allSettled([d?.drop()]);
    throwFirst(dropped, await Promise.allSettled([v?.owned ? v.server.close() : undefined]));
  }, patience(60_000));
  return {
    get databaseUrl() {
      return ready(db, 'useTestDatabase', 'databaseUrl').databaseUrl;
    },
    get name() {
      return ready(db, 'useTestDatabase', 'name').name;
    },
  };
}

/**
 * A fresh warehouse (of `kind`) for the case running now, on the test's Postgres or on `on`
 * (a block's server: `fx.server`); dropped when the case ends. Its `cleanup()` drops it sooner,
 * for a case that must see it gone.
 */
export async function freshWarehouse(options: WarehouseKind & CaseOptions & { on?: WarehouseServer } = {}): Promise<TestWarehouse> {
  const keep = atCaseEnd(options);
  return keep(await warehouseOn(options.on ?? (await postgresWarehouses()), options));
}

/**
 * A new database for the case running now, with no warehouse open on it: empty, or
 * (`migrated`) as `migrate()` leaves one; on the test's Postgres or on `on`. Dropped when the
 * case ends (`drop()`: sooner).
 */
export async function freshDatabase(options: CaseOptions & { migrated?: boolean; on?: WarehouseServer } = {}): Promise<TestDatabase> {
  const keep = atCaseEnd(options);
  const db = await (options.on ?? (await postgresWarehouses())).database({ migrated: options.migrated });
  const { cleanup } = keep({ cleanup: () => db.drop() });
  return { ...db, drop: cleanup };
}

/**
 * A simulator with `options` and a fresh migrated warehouse for the case running now (on the
 * test's Postgres, or on `on`): the case's own useSimAndWarehouse. Afterwards the warehouse is
 * dropped and the simulator closed, whichever came up.
 */
export async function freshSimAndWarehouse(options: SimOptions = {}, where: CaseOptions & { on?: WarehouseServer } = {}): Promise<SimAndWarehouse> {
  const keep = atCaseEnd(where);
  const [s, w] = await Promise.allSettled([startSimulator(options), warehouseOn(where.on ?? (await postgresWarehouses()), {})]);
  const sim = s.status === 'fulfilled' ? s.value : undefined;
  const made = w.status === 'fulfilled' ? w.value : undefined;
  // Kept before a failure is thrown, so that what did come up goes too.
  const { cleanup } = keep({ cleanup: async () => throwFirst(await Promise.allSettled([made?.cleanup(), sim?.close()])) });
  if (s.status === 'rejected') throw s.reason;
  if (w.status === 'rejected') throw w.reason;
  const tw = { ...made!, cleanup };
  return { sim: sim!, tw, warehouse: tw.warehouse, databaseUrl: tw.databaseUrl, sync: (logger, env, sources, extra) => syncOnce(sim!, tw.warehouse, logger, env, sources, extra) };
}
