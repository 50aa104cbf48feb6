// Only a real answer binds (issue 45): a first `tesync sync` whose TE_APP_URL is on a wrong port
// (nobody answers) fails, and the right URL then syncs without --force; no rebinding is
// logged, and the warehouse is bound to the upstream that answered. A warehouse with data of
// its upstream is still refused another one.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';

describe('a warehouse is bound by the first upstream that answers', () => {
  let sim: Simulator;
  let db: TestDatabase;
  let w: Warehouse;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 3, historyDays: 3, chartsPerToken: 1 });
    db = await createTestDatabase({ migrated: true });
    w = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '', maxConnections: 1 });
  }, patience(60_000));
  afterAll(async () => {
    await w?.close();
    await db?.drop();
    await sim?.close();
  });

  it('a wrong port first, then the right URL: exit 0 without --force, no rebinding logged', async () => {
    const wrong = `http://127.0.0.1:${await freePort()}`;
    const first = await runCli(['sync', '--source', 'app'], { DATABASE_URL: db.databaseUrl, TE_APP_URL: wrong }, { timeoutMs: 60_000 });
    expect(first.code, first.stdout + first.stderr).toBe(1);

    const right = await runCli(['sync', '--source', 'app'], { DATABASE_URL: db.databaseUrl, TE_APP_URL: sim.url }, { timeoutMs: 120_000 });
    expect(right.code, right.stdout + right.stderr).toBe(0);
    const [binding] = await w.query<{ port: number | null }>(sql`select port from sync.upstream_bindings where source = 'app'`);
    expect(binding!.port).toBe(Number(new URL(sim.url).port));
    const events = await w.query<{ event: string }>(sql`select event from sync.upstream_binding_log where source = 'app' order by at`);
    expect(events.map((e) => e.event)).not.toContain('rebound');

    // Now it holds data of that upstream: another one is refused, as ever.
    const other = await runCli(['sync', '--source', 'app'], { DATABASE_URL: db.databaseUrl, TE_APP_URL: wrong }, { timeoutMs: 60_000 });
    expect(other.code, other.stdout + other.stderr).toBe(2);
    expect(other.stderr).toMatch(/mirrors another upstream/);
  }, patience(240_000));
});
