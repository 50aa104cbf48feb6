// What changed between two instants (src/store/sql/changes.sql), on a warehouse synced three
// times across the simulator's epochs: a delisting (epoch 1), then a revision of past values and
// the token listed again (epoch 2, fetched whole so that every revised day is read). For every
// versioned table and each sync's interval: `sync.changes` carries `T_as_of` before the sync to
// `T_as_of` after it, key by key, one change after another; `sync.changes_net` is the difference
// of the two snapshots; the revisions are exactly the values the simulator revised; the summary
// counts them; bounds given as run ids stand for the runs' ends.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { BOOKKEEPING_COLUMNS } from '../../../src/schema/warehouse/columns.ts';
import { VERSIONED } from '../../../src/schema/warehouse/history.ts';
import { rulesOf } from '../../../src/schema/warehouse/table-rules.ts';
import { parseJson, stringifyJson } from '../../../src/lib/json.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { patience } from '../../helpers/patience.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const { logger } = createTestLogger([appKey, gatewayKey], 'warn');
const TABLES = VERSIONED.map((t) => ({ name: `${getTableConfig(t).schema}.${getTableConfig(t).name}`, key: rulesOf(t).key.map((c) => c.name) }));

type Row = Record<string, unknown>;
/** A change as the test compares it: its type, and the rows as JSON text (null where absent). */
interface Change {
  type: 'insert' | 'update' | 'delete';
  before: string | null;
  after: string | null;
  changed: string[];
}

const text = (v: unknown) => (v === undefined ? undefined : stringifyJson(v));
/** A key's day as the simulator names it: a midnight (UTC) as its date. */
const midnight = (v: string) => (/^\d{4}-\d\d-\d\dT00:00:00(\+00:00|Z)$/.test(v) ? v.slice(0, 10) : v);
/** Pure: the columns (in `order`) whose values differ between two rows, bookkeeping aside. */
function differing(order: readonly string[], b: Row | null, a: Row | null): string[] {
  return order.filter((c) => !BOOKKEEPING_COLUMNS.includes(c) && (b === null ? undefined : text(b[c])) !== (a === null ? undefined : text(a[c])));
}

/** Pure: the difference of two snapshots (key → row JSON), as one change per key that differs. */
function snapshotDiff(order: readonly string[], before: Map<string, string>, after: Map<string, string>): Map<string, Change> {
  const out = new Map<string, Change>();
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const [b, a] = [before.get(key) ?? null, after.get(key) ?? null];
    const changed = differing(order, b === null ? null : (parseJson(b) as Row), a === null ? null : (parseJson(a) as Row));
    if (b !== null && a !== null && changed.length === 0) continue;
    out.set(key, { type: b === null ? 'insert' : a === null ? 'delete' : 'update', before: b, after: a, changed });
  }
  return out;
}

describe('sync.changes on a warehouse synced across a delisting and a revision', () => {
  const f = useSimAndWarehouse({ tokens: 5, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  /** Server instants: before the first sync, then after each. */
  const at: string[] = [];
  const runs: string[] = [];
  const order = new Map<string, string[]>();

  const q = <T>(statement: string) => f.warehouse.query<T & Row>(sql.raw(statement));
  const serverNow = async () => (await q<{ t: string }>(`select sync.server_clock()::text as t`))[0]!.t;
  const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;
  /** An instant as the functions take it: typed, since a bare literal could be a run id as well. */
  const instant = (s: string) => `${literal(s)}::timestamptz`;

  /** `T_as_of(instant)`: key JSON → row JSON. */
  async function snapshot(table: { name: string; key: string[] }, instant: string): Promise<Map<string, string>> {
    const keyOf = `jsonb_build_object(${table.key.map((k) => `'${k}', x."${k}"`).join(', ')})::text`;
    const rows = await q<{ k: string; r: string }>(`select ${keyOf} as k, to_jsonb(x.*)::text as r from ${table.name}_as_of(${literal(instant)}) x`);
    return new Map(rows.map((r) => [r.k, r.r]));
  }

  type Listed = { type: Change['type']; key: string; before: string | null; after: string | null; changed: string[]; revision: boolean; known_at: string; data_time: string | null };
  const list = (fn: string, table: string, from: string, to: string) =>
    q<Listed>(
      `select change_type as type, key::text as key, before::text as before, after::text as after, changed, revision, known_at::text as known_at, data_time::text as data_time
         from sync.${fn}(${literal(table)}, ${from}, ${to})`,
    );

  beforeAll(async () => {
    at.push(await serverNow());
    for (const epoch of [0, 1, 2]) {
      f.sim.setEpoch(epoch);
      // The revision epoch fetched whole: every revised day is read, inside the overlap or not.
      const r = await f.sync(logger, { appKey, gatewayKey }, ['app', 'gateway'], { ...(epoch === 2 ? { full: true } : {}) });
      expect(r.status, `sync at epoch ${epoch}`).toBe('succeeded');
      runs.push(r.runId);
      at.push(await serverNow());
    }
    for (const t of TABLES) {
      const cols = await q<{ c: string }>(`select attname::text as c from pg_attribute where attrelid = ${literal(t.name)}::regclass and attnum > 0 and not attisdropped order by attnum`);
      order.set(t.name, cols.map((c) => c.c));
    }
  }, patience(240_000));

  it('carry T_as_of before each sync to T_as_of after it, on every versioned table; changes_net is their difference', async () => {
    const changedTables = new Set<string>();
    const types = new Map<string, number>();
    for (let i = 1; i < at.length; i++) {
      const [from, to] = [instant(at[i - 1]!), instant(at[i]!)];
      for (const t of TABLES) {
        const cols = order.get(t.name)!;
        const expected = snapshotDiff(cols, await snapshot(t, at[i - 1]!), await snapshot(t, at[i]!));
        if (expected.size > 0) changedTables.add(t.name);
        const steps = await list('changes', t.name, from, to);
        for (const s of steps) types.set(s.type, (types.get(s.type) ?? 0) + 1);
        // One change after another: each key's changes chain, its first before and last after
        // are its rows in the two snapshots, and each step says which columns it changed.
        const byKey = new Map<string, Listed[]>();
        for (const s of steps) (byKey.get(s.key) ?? byKey.set(s.key, []).get(s.key)!).push(s);
        const folded = new Map<string, Change>();
        for (const [key, chain] of byKey) {
          for (const [j, s] of chain.entries()) {
            expect(s.type, `${t.name} ${key}`).toBe(s.before === null ? 'insert' : s.after === null ? 'delete' : 'update');
            if (j > 0) expect(s.before, `${t.name} ${key}: step ${j} begins where ${j - 1} ended`).toBe(chain[j - 1]!.after);
            expect(s.changed, `${t.name} ${key} step ${j}`).toEqual(differing(cols, s.before === null ? null : (parseJson(s.before) as Row), s.after === null ? null : (parseJson(s.after) as Row)));
          }
          const [b, a] = [chain[0]!.before, chain.at(-1)!.after];
          const changed = differing(cols, b === null ? null : (parseJson(b) as Row), a === null ? null : (parseJson(a) as Row));
          if (b !== null && a !== null && changed.length === 0) continue;
          folded.set(key, { type: b === null ? 'insert' : a === null ? 'delete' : 'update', before: b, after: a, changed });
        }
        expect(folded, `${t.name}, sync ${i}: sync.changes against the snapshots`).toEqual(expected);
        // Each known time lies in the interval.
        for (const s of steps) expect(s.known_at > at[i - 1]! && s.known_at <= at[i]!, `${t.name} ${s.key} known at ${s.known_at}`).toBe(true);

        const net = await list('changes_net', t.name, from, to);
        expect(new Map(net.map((n) => [n.key, { type: n.type, before: n.before, after: n.after, changed: n.changed }])), `${t.name}, sync ${i}: sync.changes_net`).toEqual(expected);
      }
    }
    // The epochs change most tables: a test that compared empty sets would prove nothing.
    expect(changedTables.size, [...changedTables].join(' ')).toBeGreaterThanOrEqual(20);
    expect([...types.keys()].sort()).toEqual(['delete', 'insert', 'update']);
    console.log(`changes over three syncs: ${[...types].map(([k, n]) => `${n} ${k}s`).join(', ')} in ${changedTables.size} tables`);
  });

  it('name as revisions exactly the values the simulator revised', async () => {
    const revised = f.sim.data.epochChanges.epoch2.revised!;
    const found = async (i: number) => {
      const out: string[] = [];
      for (const t of TABLES) {
        for (const r of await list('revisions', t.name, instant(at[i - 1]!), instant(at[i]!))) {
          expect(r.revision).toBe(true);
          const k = parseJson(r.key) as Record<string, string>;
          out.push(`${t.name} ${r.type} ${t.key.map((c) => midnight(k[c]!)).join(' ')}`);
        }
      }
      return out.sort();
    };
    // The first sync inserts, the second changes only the present (a new day, a delisting).
    expect(await found(1)).toEqual([]);
    expect(await found(2)).toEqual([]);
    const trendPeriods = await q<{ period: string; day: string }>(
      `select distinct period, to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as day from gateway.trend_points_as_of(${instant(at[2]!)})
        where token_slug = ${literal(revised.slug)} and series_key = 'multAnnualized'`,
    );
    const expected = [
      ...revised.appHistory.cells.map((c) => `app.metric_history update ${revised.slug} ${c.stream} ${c.metric} ${c.date}`),
      ...revised.gatewayTrend.days.flatMap((d) => trendPeriods.filter((p) => p.day === d.date).map((p) => `gateway.trend_points update ${revised.slug} ${p.period} multAnnualized ${d.date}`)),
    ].sort();
    expect(revised.gatewayTrend.days.length).toBeGreaterThan(0);
    expect(await found(3)).toEqual(expected);
  });

  it("answer docs/warehouse.md's queries of them", async () => {
    const doc = readFileSync(new URL('../../../docs/warehouse.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('### What changed between two instants'), doc.indexOf('\n## Export'));
    const [summary, revisions] = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
    // What the last sync run changed: the interval between the last two runs' ends.
    const perTable = await q<{ table_name: string; inserts: number }>(summary!.replace(/;\s*$/, ''));
    const expected = await q<{ table_name: string }>(
      `select table_name from sync.change_summary(${literal(runs[1]!)}::uuid, ${literal(runs[2]!)}::uuid) where inserts + updates + deletes > 0`,
    );
    expect(perTable.map((r) => r.table_name)).toEqual(expected.map((r) => r.table_name));
    expect(perTable.map((r) => r.table_name)).toContain('app.metric_history');
    // The history revised since a week ago: every cell the simulator revised, then and now.
    const revised = f.sim.data.epochChanges.epoch2.revised!;
    const rows = await q<{ token: string; stream: string; metric: string; data_time: string; value_then: string; value_now: string }>(
      `select token, stream, metric, to_char(data_time at time zone 'UTC', 'YYYY-MM-DD') as data_time, value_then, value_now from (${revisions!.replace(/;\s*$/, '')}) r`,
    );
    const cell = (c: { stream: string; metric: string; date: string; before: unknown; after: unknown }) => `${revised.slug} ${c.stream} ${c.metric} ${c.date} ${String(c.before)} ${String(c.after)}`;
    expect(rows.map((r) => cell({ stream: r.stream, metric: r.metric, date: r.data_time, before: r.value_then, after: r.value_now })).sort()).toEqual(revised.appHistory.cells.map(cell).sort());
  });

  it('count them per table in sync.change_summary, and take run ids for their ends', async () => {
    for (let i = 1; i < at.length; i++) {
      const summary = await q<{ table_name: string; inserts: string; updates: string; deletes: string; revisions: string }>(
        `select table_name, inserts::text, updates::text, deletes::text, revisions::text from sync.change_summary(${instant(at[i - 1]!)}, ${instant(at[i]!)})`,
      );
      expect(summary.map((s) => s.table_name)).toEqual(TABLES.map((t) => t.name).sort());
      for (const s of summary) {
        const steps = await list('changes', s.table_name, instant(at[i - 1]!), instant(at[i]!));
        const count = (type: string) => String(steps.filter((c) => c.type === type).length);
        expect([s.inserts, s.updates, s.deletes, s.revisions], s.table_name).toEqual([count('insert'), count('update'), count('delete'), String(steps.filter((c) => c.revision).length)]);
      }
    }
    // A run id stands for its run's end: the changes between two runs are those of the second.
    const ends = await q<{ id: string; t: string }>(`select id::text as id, finished_at::text as t from sync.runs order by started_at`);
    expect(ends.map((e) => e.id)).toEqual(runs);
    for (const t of ['app.screener_rows', 'app.metric_history', 'gateway.tokens']) {
      const byRuns = await list('changes', t, `${literal(runs[1]!)}::uuid`, `${literal(runs[2]!)}::uuid`);
      const byInstants = await list('changes', t, instant(ends[1]!.t), instant(ends[2]!.t));
      expect(byRuns, t).toEqual(byInstants);
      expect(byRuns.length, t).toBeGreaterThan(0);
    }
    const refusal = (statement: string) => q(statement).then(() => 'answered', (err: Error & { cause?: Error }) => err.cause?.message ?? err.message);
    expect(await refusal(`select * from sync.changes('sync.runs', now() - interval '1 day', now())`)).toMatch(/sync\.runs is not a versioned table/);
    expect(await refusal(`select * from sync.changes('app.tokens', gen_random_uuid(), ${literal(runs[0]!)}::uuid)`)).toMatch(/^no run [0-9a-f-]{36} in sync\.runs$/);
  });
});
