// Volatile fields make no version (src/schema/warehouse/columns.ts): the jsonb comparison without
// them (volatile-sql.ts) on Postgres' own text form, keys only and at any depth, and the write
// path leaving a row as it is when only they moved, rewriting it when anything else did.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tokens } from '../../../src/schema/warehouse/app.ts';
import { VOLATILE_COLUMNS, withoutVolatile } from '../../../src/schema/warehouse/columns.ts';
import { rulesOf } from '../../../src/schema/warehouse/table-rules.ts';
import { upsertRows } from '../../../src/store/write/upsert.ts';
import { withoutVolatileSql } from '../../../src/store/write/volatile-sql.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

describe('withoutVolatile (pure)', () => {
  it('drops asOf, generatedAt and servedAt at any depth and keeps the rest', () => {
    expect(withoutVolatile({ status: 'fresh', asOf: 'x', w: [{ generatedAt: 'y', k: 1 }], m: { servedAt: 'z' } })).toEqual({ status: 'fresh', w: [{ k: 1 }], m: {} });
    expect(withoutVolatile('fresh')).toBe('fresh');
    expect(withoutVolatile(null)).toBeNull();
  });
  it('names the volatile columns after the fields; none of them is compared', () => {
    expect(VOLATILE_COLUMNS).toEqual(['served_at', 'as_of', 'generated_at']);
    for (const c of rulesOf(tokens).compared) expect(VOLATILE_COLUMNS).not.toContain(c.name);
  });
});

describe('the jsonb comparison without volatile fields', () => {
  const w = useTestWarehouse();

  /** Whether a and b compare equal once the volatile members are left out. */
  const same = async (a: unknown, b: unknown) => {
    const [row] = await w.query<{ same: boolean }>(
      sql`select ${sql.raw(withoutVolatileSql('x::text'))} = ${sql.raw(withoutVolatileSql('y::text'))} as same from (select ${JSON.stringify(a)}::jsonb as x, ${JSON.stringify(b)}::jsonb as y) v`,
    );
    return row!.same;
  };

  it('ignores volatile members wherever they sit, first, last or alone', async () => {
    const mv = (asOf: string | null) => ({ metric: 'm', value: '1.50', asOf, freshness: 'fresh' });
    expect(await same({ row: mv('2026-01-01T00:00:00Z'), freshness: { generatedAt: 'a', status: 'ok' } }, { row: mv('2026-01-02T00:00:00Z'), freshness: { generatedAt: 'b', status: 'ok' } })).toBe(true);
    expect(await same([{ asOf: 'a' }, { zz: 1, asOf: 'a', servedAt: 1 }], [{ asOf: 'b' }, { zz: 1, asOf: null, servedAt: 2 }])).toBe(true);
    // A member gone is the same as one moved.
    expect(await same({ a: 1, asOf: 'x', generatedAt: 'y', z: 2 }, { a: 1, z: 2 })).toBe(true);
    expect(await same({ asOf: 'x' }, {})).toBe(true);
  });

  it('still sees every other change, and never matches text inside a value', async () => {
    expect(await same({ asOf: 'a', value: '1.50' }, { asOf: 'b', value: '1.5' })).toBe(false);
    expect(await same({ freshness: { status: 'fresh', asOf: 'a' } }, { freshness: { status: 'stale', asOf: 'a' } })).toBe(false);
    expect(await same({ note: '{"asOf": "a"}' }, { note: '{"asOf": "b"}' })).toBe(false);
    expect(await same({ note: 'x", "asOf": "a' }, { note: 'x", "asOf": "b' })).toBe(false);
    expect(await same({ list: ['asOf', 'a'] }, { list: ['asOf', 'b'] })).toBe(false);
    expect(await same({ 'x"asOf': 'a' }, { 'x"asOf': 'b' })).toBe(false);
    // A volatile member holding an object stays compared: a version too many, never one missed.
    expect(await same({ asOf: { at: 'a' } }, { asOf: { at: 'b' } })).toBe(false);
  });

  it('leaves a row whose payload moved only its instants, and rewrites one that changed', async () => {
    const now = new Date('2026-07-01T00:00:00Z');
    // Each write a minute later: a version starts when its values were received.
    let minute = 0;
    const row = (asOf: string, status: string, extra: Record<string, unknown> = {}) => ({
      slug: 'aurora', firstSeenAt: now, lastSeenAt: now, fetchedAt: new Date(now.getTime() + ++minute * 60_000), runId: null, status: 'ok',
      asOf: new Date(asOf), freshness: JSON.stringify({ status }),
      payload: { slug: 'aurora', freshness: { status, asOf }, ...extra },
    });
    expect(await upsertRows(w.db, tokens, [row('2026-06-30T00:00:00.000Z', 'fresh')])).toBe(1);
    expect(await upsertRows(w.db, tokens, [row('2026-06-30T00:07:00.000Z', 'fresh')])).toBe(0);
    expect(await upsertRows(w.db, tokens, [row('2026-06-30T00:08:00.000Z', 'fresh', { imageUrl: 'x' })])).toBe(1);
    expect(await upsertRows(w.db, tokens, [row('2026-06-30T00:09:00.000Z', 'stale', { imageUrl: 'x' })])).toBe(1);
    const [stored] = await w.query<{ a: string; p: string }>(sql`select as_of::text as a, payload->'freshness'->>'asOf' as p from app.tokens`);
    // The instants that came with the current values.
    expect(stored!.p).toBe('2026-06-30T00:09:00.000Z');
    const [{ n }] = (await w.query<{ n: number }>(sql`select count(*)::int as n from app.tokens_history`)) as [{ n: number }];
    expect(n).toBe(2);
  });
});
