// pendingRemovals (src/engine/job/removals.ts), on a real warehouse: per `replace` write, the set
// (named with its scope), its members (delisted ones not) and what would leave; which are mass
// removals and their words; finding them removes nothing. The rule's bounds: sets.test.ts.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeRemovals, massRemovals, pendingRemovals, sameRemovals } from '../../../src/engine/job/removals.ts';
import { into, type TableWrite } from '../../../src/engine/kit/types.ts';
import { metricHistory, metrics, tokens } from '../../../src/schema/warehouse/app.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const w = useTestWarehouse();
beforeAll(async () => {
  await w.query(sql`insert into app.tokens (slug, payload) select s, '{}'::jsonb from unnest(array['a','b','c','d','e','f']) s`);
  await w.query(sql`insert into app.tokens (slug, payload, delisted_at) values ('g', '{}'::jsonb, now())`);
  await w.query(sql`insert into app.metric_history (token_slug, stream, metric, ts, value)
    select 'a', 'fees', 'm', timestamptz '2026-06-01T00:00:00Z' + d * interval '1 day', d from generate_series(0, 4) d
    union all select 'a', 'burns', 'm', timestamptz '2026-06-01T00:00:00Z' + d * interval '1 day', d from generate_series(0, 1) d
    union all select 'b', 'fees', 'm', timestamptz '2026-06-01T00:00:00Z', 1`);
});

const token = (slug: string) => ({ slug, payload: {} });
const day = (slug: string, stream: string, d: number) => ({ tokenSlug: slug, stream, metric: 'm', ts: new Date(Date.UTC(2026, 5, 1 + d)), value: String(d) });

describe('pendingRemovals', () => {
  it('lists, per replacing write, the set, its members and the keys that would leave', async () => {
    const writes: TableWrite<any>[] = [
      into(tokens, [token('a'), token('b'), token('h')], { replace: {} }),
      into(metricHistory, [0, 1, 2, 3].map((d) => day('a', 'fees', d)), { replace: { tokenSlug: 'a', stream: 'fees' } }),
      into(metrics, [], {}),
      into(metricHistory, [0, 1].map((d) => day('a', 'burns', d)), { replace: { tokenSlug: 'a', stream: 'burns' } }),
      into(metricHistory, [], { replace: { tokenSlug: 'zz', stream: 'fees' } }),
    ];
    const pending = await pendingRemovals(w.db, writes);
    expect(pending).toEqual([
      // The delisted token is no member, and does not leave again.
      { write: 0, set: 'app.tokens', members: 6, absent: ['["c"]', '["d"]', '["e"]', '["f"]'] },
      { write: 1, set: 'app.metric_history {"tokenSlug":"a","stream":"fees"}', members: 5, absent: [expect.stringMatching(/^\["a", "fees", "m", "2026-06-05T00:00:00/)] },
    ]);

    // More than a fifth, three or more: the token list only.
    const mass = massRemovals(pending);
    expect(mass.map((p) => p.write)).toEqual([0]);
    expect(describeRemovals(mass)).toBe('app.tokens would lose 4 of 6');
    expect(describeRemovals(pending)).toBe('app.tokens would lose 4 of 6; app.metric_history {"tokenSlug":"a","stream":"fees"} would lose 1 of 5');

    // Finding them removed nothing: the same writes find the same removals.
    expect(sameRemovals(pending, await pendingRemovals(w.db, writes))).toBe(true);
    const [left] = await w.query<{ listed: number; history: number }>(
      sql`select (select count(*)::int from app.tokens where delisted_at is null) as listed, (select count(*)::int from app.metric_history) as history`,
    );
    expect(left).toEqual({ listed: 6, history: 8 });
  });
});
