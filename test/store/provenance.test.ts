// Provenance of closing, refused and skipped versions (contract: time and history): a version
// that was replaced or removed links to the body that no longer carried it, a delisted row to
// the list that left it out and to the run that read it, a refused bundle to the refusal, a
// skipped one to nothing; and the archive a version points to cannot be pruned.
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

const appKey = canaryKey('ak');
const scopeless = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, scopeless, gatewayKey]);
const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);

describe('provenance of closing, refused and skipped versions', () => {
  const fx = useSimAndWarehouse({
    tokens: 5,
    historyDays: 10,
    chartsPerToken: 1,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' }, [scopeless]: { scopes: [], credits: 'all' } },
    gatewayKeys: [gatewayKey],
  });
  const runs: string[] = [];
  beforeAll(async () => {
    // Epoch 0, then 1 (a token delisted, values revised), then 2 (relisted, a bundle shrunk).
    for (const epoch of [0, 1, 2]) {
      fx.sim.setEpoch(epoch);
      const r = await fx.sync(testLog.logger, { appKey, gatewayKey }, ['app', 'gateway']);
      expect(r.status).toBe('succeeded');
      runs.push(r.runId);
    }
  }, 180_000);
  const q = <T>(s: ReturnType<typeof sql>) => fx.warehouse.query<T & Record<string, unknown>>(s);

  it('every closed version links to an archived body other than its own; a replaced one to its successor\'s', async () => {
    let closed = 0;
    for (const t of NAMES) {
      const [r] = await q<{ n: number; unlinked: number; dangling: number; own: number }>(
        sql.raw(`select count(*)::int as n,
                        count(*) filter (where closing_raw_response_id is null)::int as unlinked,
                        count(*) filter (where not exists (select 1 from sync.raw_responses b where b.id = h.closing_raw_response_id))::int as dangling,
                        count(*) filter (where closing_raw_response_id = raw_response_id)::int as own
                 from ${t}_history h`),
      );
      expect({ unlinked: r!.unlinked, dangling: r!.dangling, own: r!.own }, t).toEqual({ unlinked: 0, dangling: 0, own: 0 });
      closed += r!.n;
    }
    expect(closed).toBeGreaterThan(20);
    // A replaced version: closed by the body its successor was read from.
    const [m] = await q<{ n: number; mismatched: number }>(
      sql`select count(*)::int as n, count(*) filter (where h.closing_raw_response_id is distinct from s.raw_response_id)::int as mismatched
          from app.screener_rows_history h
          join lateral (select raw_response_id from app.screener_rows_as_of(h.known_to) s where s.token_slug = h.token_slug) s on true`,
    );
    expect(m!.n).toBeGreaterThan(0);
    expect(m!.mismatched).toBe(0);
  });

  it('a removed bundle driver links to the bundle body that no longer carried it', async () => {
    const rev = fx.sim.data.epochChanges.epoch2.revised!;
    const [v] = await q<{ body: string; path: string }>(
      sql`select b.body::text as body, b.path from app.value_drivers_history h join sync.raw_responses b on b.id = h.closing_raw_response_id
          where h.token_slug = ${rev.slug} and h.driver_id = ${rev.bundle.removedDriverId} order by h.known_to desc limit 1`,
    );
    expect(v!.path).toContain(`/tokens/${rev.slug}/full`);
    expect(v!.body).not.toContain(`"${rev.bundle.removedDriverId}"`);
  });

  it('a delisted token links to the list that left it out, and to the run that read that list', async () => {
    const slug = fx.sim.data.epochChanges.delistedSlug!;
    const [v] = await q<{ body: string; path: string; run: string; delisted: boolean }>(
      sql`select b.body::text as body, b.path, h.run_id::text as run, h.delisted_at is not null as delisted
          from app.tokens_history h join sync.raw_responses b on b.id = h.raw_response_id
          where h.slug = ${slug} and h.delisted_at is not null`,
    );
    expect(v!.delisted).toBe(true);
    expect(v!.path).toMatch(/\/api\/v1\/tokens(\?|$)/);
    expect(v!.body).not.toContain(`"${slug}"`);
    expect(v!.run).toBe(runs[1]);
  });

  it('a refused bundle links to the refusal; a skipped one to nothing', async () => {
    const r = await fx.sync(testLog.logger, { appKey: scopeless, gatewayKey }, ['app'], { full: true });
    expect(r.status).not.toBe('failed');
    const refused = await q<{ status: string; http: number; body: string }>(
      sql`select rb.status, b.http_status as http, b.body::text as body from app.research_bundles rb join sync.raw_responses b on b.id = rb.raw_response_id where rb.status = 'missing_scope'`,
    );
    expect(refused.length).toBeGreaterThan(0);
    for (const x of refused) {
      expect(x.http).toBe(403);
      expect(x.body).toContain('missing_scope');
    }
    // Without a key nothing is asked: the skipped rows link to no body.
    const s = await fx.sync(testLog.logger, { gatewayKey }, ['app'], { full: true });
    expect(s.status).not.toBe('failed');
    const [skipped] = await q<{ n: number; linked: number }>(
      sql`select count(*)::int as n, count(raw_response_id)::int as linked from app.research_bundles where status = 'skipped'`,
    );
    expect(skipped!.n).toBeGreaterThan(0);
    expect(skipped!.linked).toBe(0);
  });

  it('the archive a version points to cannot be pruned', async () => {
    await expect(q(sql`delete from sync.raw_responses where id = (select min(id) from sync.raw_responses)`)).rejects.toMatchObject({ cause: { code: '23001' } });
    await expect(q(sql`truncate sync.raw_responses`)).rejects.toMatchObject({ cause: { code: '23001' } });
  });
});
