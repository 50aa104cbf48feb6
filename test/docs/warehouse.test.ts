// docs/warehouse.md is for BI users: every example query in it must run on a synced
// warehouse, and every table the migrations create must be documented there.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { canaryKey, createTestLogger, createTestWarehouse, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const doc = readFileSync(new URL('../../docs/warehouse.md', import.meta.url), 'utf8');
const examples = [...doc.matchAll(/```sql\n-- example: ([\w-]+)\n([\s\S]*?)```/g)].map((m) => ({ name: m[1]!, text: m[2]! }));

describe('docs/warehouse.md', () => {
  let sim: Simulator;
  let tw: TestWarehouse;
  const gatewayKey = canaryKey('gw');
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 5, historyDays: 20, chartsPerToken: 1, gatewayKeys: [gatewayKey] });
    tw = await createTestWarehouse();
    const run = await syncOnce(sim, tw.warehouse, createTestLogger().logger, { gatewayKey }, ['app', 'gateway']);
    expect(run.status).not.toBe('failed');
  });
  afterAll(async () => {
    await sim?.close();
    await tw?.cleanup();
  });

  it('has example queries', () => {
    expect(examples.length).toBeGreaterThanOrEqual(4);
  });

  it.each(examples.map((e) => [e.name, e.text]))('example %s runs and returns rows', async (_name, text) => {
    const rows = await tw.warehouse.query(sql.raw(text));
    expect(rows.length).toBeGreaterThan(0);
  });

  it('documents every table', async () => {
    const tables = await tw.warehouse.query<{ name: string }>(
      sql`select table_schema || '.' || table_name as name from information_schema.tables where table_schema in ('sync', 'app', 'gateway') order by 1`,
    );
    expect(tables.length).toBeGreaterThan(15);
    const missing = tables.map((t) => t.name).filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
