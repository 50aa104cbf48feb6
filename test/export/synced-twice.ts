// The export tests' warehouse: synced from the simulator twice across its revision, three days
// apart (the first sync on a server clock three days behind, so the daily archives hold four
// days), with DuckDB in memory to read the files back and temporary folders removed after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { canaryKey, createTestLogger, createTestWarehouse, withServerClockOffset, type TestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

export interface SyncedTwice {
  sim: Simulator;
  tw: TestWarehouse;
  w: Warehouse;
  log: TestLogger;
  duck: DuckDBConnection;
  /** Two days ago on the server's clock, between the syncs, as Postgres prints a timestamptz. */
  between: string;
  /** A new temporary folder, removed by `close`. */
  newDir(): string;
  close(): Promise<void>;
}

/** `afterFirst`: run between the two syncs (e.g. an export of the first). */
export async function syncedTwice(afterFirst?: (w: Warehouse, s: Pick<SyncedTwice, 'newDir' | 'log'>) => Promise<void>): Promise<SyncedTwice> {
  const appKey = canaryKey('ak');
  const gatewayKey = canaryKey('gk');
  const log = createTestLogger([appKey, gatewayKey], 'warn');
  const dirs: string[] = [];
  const newDir = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'tesync-export-'));
    dirs.push(d);
    return d;
  };
  const sim = await startSimulator({ tokens: 5, historyDays: 8, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  const tw = await createTestWarehouse();
  const w = tw.warehouse;
  const past = await openWarehouse({ databaseUrl: withServerClockOffset(tw.databaseUrl, '-3 days'), dataDir: '' });
  const first = await syncOnce(sim, past, log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { clock: () => new Date(Date.now() - 3 * 86_400_000) }).finally(() => past.close());
  expect(first.status).toBe('succeeded');
  await afterFirst?.(w, { newDir, log });
  const between = (await w.query<{ t: string }>(sql`select (clock_timestamp() - interval '2 days')::text as t`))[0]!.t;
  sim.setEpoch(2);
  const second = await syncOnce(sim, w, log.logger, { appKey, gatewayKey }, ['app', 'gateway']);
  expect(second.status).toBe('succeeded');
  const duckInstance = await DuckDBInstance.create(':memory:');
  const duck = await duckInstance.connect();
  await duck.run("SET TimeZone = 'UTC'");
  return {
    sim,
    tw,
    w,
    log,
    duck,
    between,
    newDir,
    close: async () => {
      duck.closeSync();
      duckInstance.closeSync();
      await tw.cleanup();
      await sim.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
