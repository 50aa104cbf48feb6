// Every mirrored table says, in its declaration, which resource group fills it: what
// `analytics.data_age` and `tesync status` report by table comes from nowhere else.
import { is } from 'drizzle-orm';
import { getTableConfig, PgTable, pgSchema, text } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import * as app from '../../../src/schema/warehouse/app.ts';
import * as gateway from '../../../src/schema/warehouse/gateway.ts';
import * as sync from '../../../src/schema/warehouse/sync.ts';
import { declarationOf, declaredTables, declareTable } from '../../../src/schema/warehouse/declare-table.ts';

const tablesOf = (m: Record<string, unknown>) => Object.values(m).filter((v): v is PgTable => is(v, PgTable));

describe('table declarations', () => {
  it('every app and gateway table is declared, with its source and at least one group; bookkeeping is not', () => {
    for (const t of [...tablesOf(app), ...tablesOf(gateway)]) {
      const d = declarationOf(t);
      const { schema, name } = getTableConfig(t);
      expect(d, `${schema}.${name}`).toBeDefined();
      expect(d!.name).toBe(`${schema}.${name}`);
      expect(d!.source).toBe(schema);
      expect(d!.groups.length).toBeGreaterThan(0);
    }
    for (const t of tablesOf(sync)) expect(declarationOf(t)).toBeUndefined();
    expect(declaredTables(app, gateway, sync)).toHaveLength(tablesOf(app).length + tablesOf(gateway).length);
  });

  it('lists the tables by source, each source in its declaration order, whichever module is named first', () => {
    const names = declaredTables(gateway, app).map((d) => d.name);
    expect(declaredTables(app, gateway).map((d) => d.name)).toEqual(names);
    expect(names.slice(0, 3)).toEqual(['app.metrics', 'app.tokens', 'app.screener_rows']);
    expect(names.findIndex((n) => n.startsWith('gateway.'))).toBe(tablesOf(app).length);
  });

  it('returns the drizzle table itself, and refuses a table declared twice or filled by no group', () => {
    const s = pgSchema('declare_table_test');
    const t = s.table('t', { id: text('id').primaryKey() });
    expect(declareTable(t, { groups: ['g'], sets: [{ scope: [], statedBy: 'a test' }] })).toBe(t);
    expect(declarationOf(t)?.sets).toEqual([{ scope: [], statedBy: 'a test' }]);
    expect(() => declareTable(t, { groups: ['g'] })).toThrow(/declared twice/);
    expect(() => declareTable(s.table('u', { id: text('id').primaryKey() }), { groups: [] })).toThrow(/no resource group/);
  });
});
