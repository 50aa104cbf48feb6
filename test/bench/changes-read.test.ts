// The as-of leg's sync.changes figure (changes-read.ts), on a small warehouse synced twice across
// the simulator's first epoch: it times what sync.changes returns and the as-of read beside it,
// and judges their ratio against its limit. The figure itself comes from the bench's deep
// warehouse (npm run bench); here only that it is measured, and of what.
import postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesLine, changesRead, CHANGES_LIMIT, CHANGES_TABLE } from './changes-read.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

const appKey = canaryKey('ak');
const { logger } = createTestLogger([appKey], 'warn');

describe('the sync.changes figure of the as-of leg', () => {
  const fx = useSimAndWarehouse({ tokens: 4, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } } });
  let db: postgres.Sql;
  const at: string[] = [];
  const now = async () => (await fx.warehouse.query<{ t: string }>(sql`select sync.server_clock()::text as t`))[0]!.t;

  beforeAll(async () => {
    db = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    for (const epoch of [0, 1]) {
      at.push(await now());
      fx.sim.setEpoch(epoch);
      expect((await fx.sync(logger, { appKey }, ['app'])).status).toBe('succeeded');
    }
    at.push(await now());
  }, patience(120_000));
  afterAll(async () => {
    await db?.end({ timeout: 5 });
  });

  it('times sync.changes over an interval against the as-of read at its end, and judges the ratio', async () => {
    const r = await changesRead(db, { runs: 1, quickRuns: 1, from: at[1]!, to: at[2]! });
    const [n] = await db<{ n: number; rows: number }[]>`
      select (select count(*)::int from sync.changes(${CHANGES_TABLE}, ${at[1]!}::timestamptz, ${at[2]!}::timestamptz)) as n,
             (select count(*)::int from app.screener_rows_as_of(${at[2]!}::timestamptz)) as rows`;
    // The delisted token's row left the screener; the revised token's changed.
    expect(r).toMatchObject({ table: 'app.screener_rows', from: at[1], to: at[2], changes: n!.n, asOfRows: n!.rows, limit: CHANGES_LIMIT });
    expect(r.changes).toBeGreaterThanOrEqual(2);
    expect(r.ms).toBeGreaterThan(0);
    expect(r.asOfMs).toBeGreaterThan(0);
    expect(r.ratio).toBeCloseTo(r.ms / r.asOfMs, 6);
    expect(r.met).toBe(r.ratio <= CHANGES_LIMIT);
    expect(changesLine(r)).toMatch(/^as-of: sync\.changes over one day of app\.screener_rows: \d+ changes in [\d.]+ ms; app\.screener_rows_as_of: \d+ rows in [\d.]+ ms; ratio [\d.]+ \(limit 2(, FAILED)?\)$/);
    // By default, the last whole UTC day on the warehouse's clock: the syncs ran today.
    const day = await changesRead(db, { runs: 1, quickRuns: 1 });
    expect(day.changes).toBe(0);
    expect(day.to > day.from).toBe(true);
  });
});
