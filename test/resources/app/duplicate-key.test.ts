// A body that names a key twice with two values could mean either (RFC 8259 leaves it open):
// the snapshot is refused, not read with the last value as JSON.parse would. Neither value
// reaches a table, the resource is `invalid` with its body kept verbatim (as text: jsonb would
// collapse the two names), it is asked once (a retry would not change how it was written), and
// the rest of the run goes on.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';

const appKey = canaryKey('ak');
const log = createTestLogger([appKey], 'warn');
const fx = useSimAndWarehouse({ tokens: 4, historyDays: 3, chartsPerToken: 1, forms: { duplicatedKeys: { 'app.token': 'effectiveMarketCap' } } });

describe('a key named twice', () => {
  it('a snapshot naming effectiveMarketCap twice: neither value stored, invalid, the body kept with both', async () => {
    const run = await fx.sync(log.logger, { appKey }, ['app']);
    const slug = fx.sim.data.appTokens()[0]!.slug;
    const path = `/api/v1/tokens/${slug}`;

    const [state] = await fx.warehouse.query<{ status: string; last_error: string }>(sql`select status, last_error from sync.resource_state where source = 'app' and resource = ${`token/${slug}/snapshot`}`);
    expect(state).toMatchObject({ status: 'invalid' });
    expect(state!.last_error).toMatch(/"effectiveMarketCap" appears twice/);
    expect(await fx.warehouse.query(sql`select 1 from app.token_snapshots where token_slug = ${slug}`)).toHaveLength(0);
    expect(await fx.warehouse.query(sql`select 1 from app.metric_values where token_slug = ${slug} and surface = 'snapshot'`)).toHaveLength(0);

    const bodies = await fx.warehouse.query<{ body: unknown; body_text: string }>(sql`select body, body_text from sync.raw_responses where path = ${path} and status = 'invalid'`);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.body).toBeNull();
    expect(bodies[0]!.body_text.match(/"effectiveMarketCap":/g)).toHaveLength(2);
    expect(bodies[0]!.body_text).toContain('"effectiveMarketCap":"0","effectiveMarketCap":');
    // Asked once: how a body is written does not change by asking again.
    expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(1);

    // The rest of the run went on: the screener, whose rows name the key once each, is stored.
    expect(run.status).toBe('partial');
    expect(Number((await fx.warehouse.query<{ n: string }>(sql`select count(*)::text as n from app.screener_rows`))[0]!.n)).toBe(fx.sim.data.appScreenerRows().length);
  }, 60_000);
});
