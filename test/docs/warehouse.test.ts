// docs/warehouse.md is for BI users: every example query in it (```sql blocks opening with
// `-- example: <name>`) must return what the simulator served, on a warehouse synced from it
// over HTTP: at epoch 0, after epoch 1 delists 'cobalt-dex', and after upstream renames one of
// aurora's chart series. The expected rows come from the simulator's dataset API
// (test/docs/doc-examples.ts), never from the warehouse. And every table the migrations create
// must be documented there.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareDecimal } from '../../sim/index.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { assertSameAsServed, docExamples, DOC_PATH, EXPECTED, mirroredTimeframe, queryAsText, renameSeries, Served, type SeriesRename, type Synced } from './doc-examples.ts';

const doc = readFileSync(DOC_PATH, 'utf8');
const examples = docExamples(doc);
/** The doc's own section of examples. */
const exampleSection = doc.slice(doc.indexOf('\n## Example queries'));

// Six tokens, so that 'zuerich-yield' (no metric history) is there; with seed 33 it is the
// cheapest by 30-day P/FCF and 'cobalt-dex', delisted at epoch 1, the second cheapest.
const SIM = { tokens: 6, historyDays: 30, chartsPerToken: 1, seed: 33 };
const DELISTED = 'cobalt-dex';

describe('docs/warehouse.md', () => {
  const gatewayKey = canaryKey('gw');
  const fx = useSimAndWarehouse({ ...SIM, gatewayKeys: [gatewayKey] });
  const { logger } = createTestLogger();
  const served = new Served();

  /** Syncs from the simulator as it stands and records what it served. */
  async function sync(what: Omit<Synced, 'data'>, extra: { full?: boolean } = {}) {
    const run = await fx.sync(logger, { gatewayKey }, [...what.sources], { ...extra, ...(what.tokens ? { tokens: [...what.tokens] } : {}) });
    expect(run.status).toBe('succeeded');
    const [window] = (await queryAsText(fx.databaseUrl, `select started_at, finished_at from sync.runs where id = '${run.runId}'`)).rows;
    served.add({ data: fx.sim.data, ...what }, { started: window![0]!, finished: window![1]! });
  }

  async function checkEvery(when: string) {
    const failures: string[] = [];
    for (const e of examples) {
      const answer = await queryAsText(fx.databaseUrl, e.text).catch((err: Error) => ({ error: `example ${e.name} (${when}) fails: ${err.message}` }));
      if ('error' in answer) failures.push(answer.error);
      else {
        try {
          assertSameAsServed(e.name, when, answer, served);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }
    expect(failures.join('\n\n'), `docs/warehouse.md's examples, ${when}`).toBe('');
  }

  it('has example queries, each with the rows it must return', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
    expect(new Set(examples.map((e) => e.name)).size, 'example names are unique').toBe(examples.length);
    const unchecked = examples.map((e) => e.name).filter((name) => !EXPECTED[name]);
    expect(unchecked, 'examples without expected rows in test/docs/doc-examples.ts').toEqual([]);
    for (const name of ['latest-screener', 'app-vs-gateway-screener', 'pfcf-history', 'gateway-pfcf-trend', 'chart-series', 'gateway-chart-longest']) expect(exampleSection).toContain(`-- example: ${name}\n`);
  });

  describe('epoch 0', () => {
    beforeAll(() => sync({ sources: ['app', 'gateway'] }));

    it('the cheapest token has no history, so an example that picked it blindly would show none', () => {
      const data = served.app;
      const cheapest = [...data.appScreenerRows()]
        .filter((r) => r.multiples['30d'].value !== null)
        .sort((a, b) => compareDecimal(a.multiples['30d'].value!, b.multiples['30d'].value!))[0]!;
      expect(cheapest.token.slug).toBe('zuerich-yield');
      expect(data.appToken(cheapest.token.slug)!.coverage.metricHistory).toBe(false);
    });

    it('every example returns what the simulator served', () => checkEvery('epoch 0'));
  });

  describe(`epoch 1: ${DELISTED} delisted`, () => {
    beforeAll(async () => {
      fx.sim.setEpoch(1);
      expect(fx.sim.data.epochChanges.delistedSlug).toBe(DELISTED);
      await sync({ sources: ['app', 'gateway'] });
    });

    it('the whole screener without the delisted token closed its row; the token is only delisted', async () => {
      const rows = await fx.warehouse.query<{ token_slug: string }>(sql`select token_slug from app.screener_rows`);
      expect(rows.map((r) => r.token_slug)).not.toContain(DELISTED);
      const [closed] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.screener_rows_history where token_slug = ${DELISTED}`);
      expect(closed!.n).toBeGreaterThan(0);
      const [t] = await fx.warehouse.query<{ delisted: boolean }>(sql`select delisted_at is not null as delisted from app.tokens where slug = ${DELISTED}`);
      expect(t?.delisted).toBe(true);
    });

    it('every example returns what the simulator served', () => checkEvery(`epoch 1, ${DELISTED} delisted`));
  });

  describe("a series of aurora's gateway chart renamed upstream", () => {
    let rename: SeriesRename;
    beforeAll(async () => {
      const chart = fx.sim.data.gatewayCharts('aurora')![0]!;
      const timeframe = mirroredTimeframe('all', chart.timeframes)!;
      const path = `/v1/tokens/aurora/charts/${chart.key}?timeframe=${timeframe}`;
      const res = await fetch(fx.sim.url + path, { headers: { authorization: `Bearer ${gatewayKey}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: Parameters<typeof renameSeries>[0] };
      const from = body.data.config.series[0]!.key;
      rename = { slug: 'aurora', chartKey: chart.key, timeframe, from, to: `${from}Net`, label: 'Renamed upstream' };
      // Twice: renaming one of few series loses more than a fifth of the points, which are
      // removed only when a second response, fetched at once, agrees.
      const renamed = { status: 200, body: JSON.stringify({ ...body, data: renameSeries(body.data, rename) }) };
      fx.sim.script(path, [renamed, renamed]);
      // The chart is asked again only when its marker moves: a full sync of aurora asks it now.
      await sync({ sources: ['gateway'], tokens: ['aurora'], renames: [rename] }, { full: true });
    });

    it("the old key's points closed, their versions kept; the new key's current", async () => {
      const rows = await fx.warehouse.query<{ series_key: string; n: number }>(
        sql`select series_key, count(*)::int as n from gateway.chart_points where token_slug = 'aurora' and chart_key = ${rename.chartKey} and timeframe = ${rename.timeframe} and series_key in (${rename.from}, ${rename.to}) group by 1 order by 1`,
      );
      expect(rows.map((r) => r.series_key)).toEqual([rename.to]);
      const [old] = await fx.warehouse.query<{ n: number }>(
        sql`select count(*)::int as n from gateway.chart_points_history where token_slug = 'aurora' and chart_key = ${rename.chartKey} and timeframe = ${rename.timeframe} and series_key = ${rename.from}`,
      );
      expect(old!.n).toBeGreaterThan(0);
    });

    it('every example returns what the simulator served', () => checkEvery(`after aurora's series ${rename.from} was renamed ${rename.to}`));
  });

  it('documents every table', async () => {
    const tables = await fx.warehouse.query<{ name: string }>(
      sql`select table_schema || '.' || table_name as name from information_schema.tables where table_schema in ('sync', 'app', 'gateway') order by 1`,
    );
    expect(tables.length).toBeGreaterThan(15);
    const missing = tables.map((t) => t.name).filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
