// Point in time: every versioned table T keeps its earlier versions in T_history, and
// T_as_of(at) returns T as tesync knew it at `at`, against the simulator's epoch switch
// (revised history values, changed screener and page values, a delisted token, a new day).
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSIONED } from '../../../schema/warehouse/history.ts';
import { startSimulator, type Simulator } from '../../../sim/index.ts';
import { historyMigration } from '../../../src/warehouse/history-sql.ts';
import { rulesOf } from '../../../src/warehouse/table-rules.ts';
import { canaryKey, createTestLogger, createTestWarehouse, type TestWarehouse } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const NAMES = VERSIONED.map((t) => {
  const c = getTableConfig(t);
  return `${c.schema}.${c.name}`;
});

describe('point in time', () => {
  let sim: Simulator;
  let tw: TestWarehouse;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 6, historyDays: 30, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
    tw = await createTestWarehouse();
  });
  afterAll(async () => {
    await sim?.close();
    await tw?.cleanup();
  });

  /** A table's rows (or a function's), each as its JSON text, sorted: equal sets compare equal. */
  const rowsOf = async (from: string) => (await tw.warehouse.query<{ r: string }>(sql.raw(`select to_jsonb(x)::text as r from ${from} x order by 1`))).map((x) => x.r);
  const now = async () => ((await tw.warehouse.query<{ t: string }>(sql`select clock_timestamp()::text as t`))[0]!.t);

  it('the migrations hold what the generator makes of the declarations', () => {
    const dir = new URL('../../../drizzle/', import.meta.url);
    // The last migration that (re)makes them: a change of a versioned table must be followed by one.
    const last = readdirSync(dir).filter((f) => f.endsWith('.sql') && readFileSync(new URL(f, dir), 'utf8').includes('"sync"."keep_version"')).sort().at(-1)!;
    expect(readFileSync(new URL(last, dir), 'utf8')).toBe(historyMigration());
  });

  it('T_as_of returns every table as it was before an epoch switch and after it; versions never overlap', async () => {
    const first = await syncOnce(sim, tw.warehouse, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway']);
    expect(first.status).toBe('succeeded');
    const before = new Map<string, string[]>();
    for (const t of NAMES) before.set(t, await rowsOf(t));
    expect([...before.values()].filter((r) => r.length > 0).length).toBeGreaterThan(20);
    const k1 = await now();
    // Before the first sync nothing was known.
    const k0 = '2000-01-01T00:00:00Z';
    await delay(20);

    sim.setEpoch(1);
    const second = await syncOnce(sim, tw.warehouse, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { full: true });
    expect(second.status).toBe('succeeded');
    const k2 = await now();

    let changedTables = 0;
    for (const t of NAMES) {
      const after = await rowsOf(t);
      expect(await rowsOf(`${t}_as_of('${k1}')`), `${t} as of before the switch`).toEqual(before.get(t));
      expect(await rowsOf(`${t}_as_of('${k2}')`), `${t} as of now`).toEqual(after);
      expect(await rowsOf(`${t}_as_of('${k0}')`), `${t} before the first sync`).toEqual([]);
      if (JSON.stringify(after) !== JSON.stringify(before.get(t))) changedTables++;
    }
    // The switch revised history, screener and page values and delisted a token.
    expect(changedTables).toBeGreaterThanOrEqual(5);
    const kept = await tw.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.metric_history_history`);
    expect(kept[0]!.n).toBeGreaterThan(0);

    // Versions of one key never overlap: among the kept ones, nor with the current row.
    for (const table of VERSIONED) {
      const { schema, name } = getTableConfig(table);
      const key = rulesOf(table).key.map((c) => `"${c.name}"`);
      const on = key.map((k) => `a.${k} = b.${k}`).join(' and ');
      const [overlaps] = await tw.warehouse.query<{ n: number }>(
        sql.raw(`select (select count(*) from ${schema}.${name}_history a join ${schema}.${name}_history b on ${on} and a.ctid <> b.ctid
                   where a.known_from < b.known_to and b.known_from < a.known_to)
                 + (select count(*) from ${schema}.${name}_history a join ${schema}.${name} b on ${on} where a.known_to > b.fetched_at)
                 + (select count(*) from ${schema}.${name}_history where known_to <= known_from) as n`),
      );
      expect(Number(overlaps!.n), `${schema}.${name}`).toBe(0);
    }
  });
});
