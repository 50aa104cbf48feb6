// examples/history.py, a notebook-style client (pandas, SQLAlchemy, psycopg or psycopg2): it must
// print one token's daily 30-day P/FCF and the listed tokens' latest screener as Decimals equal,
// digit for digit, to the stored numerics (`::text`) and to what the simulator served. Warehouse
// synced at epoch 0, then epoch 1 (which delists 'cobalt-dex', the cheapest token with history at
// epoch 0). Without DATABASE_URL it reads the embedded warehouse through `tesync sql`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { compareDecimal, type SimDataset } from '../../sim/index.ts';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { embeddedFolder, isAlive, serverPids, type TempFolder } from '../helpers/embedded.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { erm30dHistory, historyPick } from './doc-examples.ts';
import { pythonWithModules, ROOT, run } from './python.ts';

const SCRIPT = 'examples/history.py';
const SIM = { tokens: 6, historyDays: 30, chartsPerToken: 1, seed: 33 };
const DELISTED = 'cobalt-dex';

/** Printed lines of one kind ('history' or 'screener'), without the kind. */
const linesOf = (stdout: string, kind: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith(`${kind}\t`))
    .map((l) => l.split('\t').slice(1));

/** What the script must print for a token's history: [token, stream, day, value]. */
function expectedHistory(data: SimDataset, slug: string, streams: readonly string[]): string[][] {
  return erm30dHistory(data, slug, streams).map(([stream, day, value]) => [slug, stream, day, value ?? 'null']);
}

/** What it must print for the screener: the listed tokens, cheapest first (nulls last). */
function expectedScreener(data: SimDataset): string[][] {
  const listed = new Set(data.appTokens().map((t) => t.slug));
  const orNull = (v: string | null) => v ?? 'null';
  return data
    .appScreenerRows()
    .filter((r) => listed.has(r.token.slug))
    .sort((a, b) => {
      const [x, y] = [a.multiples['30d'].value, b.multiples['30d'].value];
      const byValue = x === null ? (y === null ? 0 : 1) : y === null ? -1 : compareDecimal(x, y);
      return byValue || (a.token.slug < b.token.slug ? -1 : 1);
    })
    .map((r) => [r.token.slug, orNull(r.multiples['30d'].value), orNull(r.effectiveMarketCap.value), orNull(r.annualizedRevenue.value)]);
}

/** The frames' numbers are Decimals, not float64: pandas shows them as dtype object. */
function expectDecimalColumns(stdout: string) {
  for (const column of ['pfcf_30d', 'multiple_30d', 'effective_market_cap', 'annualized_revenue']) {
    expect(stdout, `${column} is dtype object (Decimals)`).toMatch(new RegExp(`^${column}\\s+object$`, 'm'));
  }
}

/** Significant digits of a printed decimal: beyond 17, a float64 could not have kept them. */
const significant = (s: string) => s.replace(/^-/, '').replace('.', '').replace(/^0+/, '').length;

describe(SCRIPT, () => {
  const fx = useSimAndWarehouse(SIM);
  let data: SimDataset;
  let python: string;

  beforeAll(async () => {
    const { logger } = createTestLogger();
    expect((await fx.sync(logger, {}, ['app'])).status).toBe('succeeded');
    expect(historyPick(fx.sim.data).slug, 'at epoch 0 the pick is the token epoch 1 delists').toBe(DELISTED);
    fx.sim.setEpoch(1);
    data = fx.sim.data;
    expect((await fx.sync(logger, {}, ['app'])).status).toBe('succeeded');
  });

  it('finds python3 with pandas, SQLAlchemy and psycopg2 (Debian: python3-pandas python3-sqlalchemy python3-psycopg2)', async () => {
    python = await pythonWithModules(SCRIPT);
  });

  it('prints the listed tokens and the cheapest one with history, as Decimals equal digit for digit to the stored numerics and the simulator', async () => {
    python ??= await pythonWithModules(SCRIPT);
    // In a session whose time zone is not UTC: the days are still UTC days.
    const out = await run(python, ['-B', SCRIPT], { extraEnv: { DATABASE_URL: fx.databaseUrl, PGTZ: 'America/New_York' } });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expectDecimalColumns(out.stdout);

    const pick = historyPick(data);
    expect(pick.slug, 'the delisted token is no longer picked').not.toBe(DELISTED);
    const history = linesOf(out.stdout, 'history');
    expect(history).toEqual(expectedHistory(data, pick.slug, pick.streams));
    expect(history.filter((h) => h[3] !== 'null').length).toBeGreaterThan(10);
    const storedHistory = await fx.warehouse.query<{ stream: string; day: string; v: string | null }>(
      sql`select stream, (ts at time zone 'UTC')::date::text as day, value::text as v from app.metric_history where token_slug = ${pick.slug} and metric = 'erm30d' order by ts, stream`,
    );
    expect(history).toEqual(storedHistory.filter((r) => pick.streams.includes(r.stream)).map((r) => [pick.slug, r.stream, r.day, r.v ?? 'null']));

    const screener = linesOf(out.stdout, 'screener');
    expect(screener).toEqual(expectedScreener(data));
    expect(screener.map((r) => r[0])).not.toContain(DELISTED);
    const stored = await fx.warehouse.query<{ slug: string; m: string | null; emc: string | null; rev: string | null }>(
      sql`select token_slug as slug, multiple_30d::text as m, effective_market_cap::text as emc, annualized_revenue::text as rev from app.screener_rows`,
    );
    for (const [slug, ...values] of screener) {
      const s = stored.find((r) => r.slug === slug);
      expect([slug, ...values]).toEqual([slug, s?.m ?? 'null', s?.emc ?? 'null', s?.rev ?? 'null']);
    }
    // Digits a float64 would have lost are there.
    expect(Math.max(...screener.flatMap((r) => r.slice(1)).filter((v) => v !== 'null').map(significant))).toBeGreaterThan(17);
  });

  it("reads a token given by name, on its only stream when it has no 'aggregate' one (a URL naming its driver)", async () => {
    python ??= await pythonWithModules(SCRIPT);
    expect(data.appStreams('basalt-finance')).toEqual(['lending']);
    // A driver the URL names is the one used (examples/tesync_db.py keeps it).
    const url = fx.databaseUrl.replace(/^postgres(ql)?:/, 'postgresql+psycopg2:');
    expect(url).toMatch(/^postgresql\+psycopg2:\/\//);
    const out = await run(python, ['-B', SCRIPT, 'basalt-finance'], { extraEnv: { DATABASE_URL: url } });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const history = linesOf(out.stdout, 'history');
    expect(history).toEqual(expectedHistory(data, 'basalt-finance', ['lending']));
    expect(history.length).toBeGreaterThan(10);
  });

  describe('without DATABASE_URL: the embedded warehouse, through `tesync sql`', () => {
    let folder: TempFolder;
    beforeAll(async () => {
      folder = await embeddedFolder('tesync-history-py');
      const synced = await runCli(['sync'], { TE_APP_URL: fx.sim.url }, { cwd: folder.dir, timeoutMs: 120_000 });
      expect(synced.code, synced.stderr).toBe(0);
    });
    afterAll(async () => {
      await folder?.cleanup();
    });

    it('prints the same, and leaves no server running', async () => {
      python ??= await pythonWithModules(SCRIPT);
      const out = await run(python, ['-B', `${ROOT}${SCRIPT}`], { cwd: folder.dir, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
      expect(out.code, out.stderr).toBe(0);
      // Its text alone: no line of `tesync sql`'s among it (issue 59).
      expect(out.stderr).toBe('');
      expectDecimalColumns(out.stdout);
      const pick = historyPick(data);
      expect(linesOf(out.stdout, 'history')).toEqual(expectedHistory(data, pick.slug, pick.streams));
      expect(linesOf(out.stdout, 'screener')).toEqual(expectedScreener(data));
      // `tesync sql` stopped when the script was done, and with it the server (nothing else used it).
      const deadline = Date.now() + patience(20_000);
      while ((await serverPids(folder.dir)).some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect((await serverPids(folder.dir)).filter(isAlive)).toEqual([]);
    });
  });
});
