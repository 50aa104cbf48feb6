// docs/warehouse.md's "A backtest without look-ahead": its SQL and examples/backtest.py must
// pick, at each decision instant, what the simulator served before that instant, and nothing
// later. Two syncs: epoch 0, then epoch 1 (which delists 'cobalt-dex' and revises 'aurora''s
// effectiveMarketCap); decision instants are the runs' finished_at, read from sync.runs.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareDecimal, type SimDataset } from '../../sim/index.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { withDecisions } from './doc-examples.ts';
import { pythonWithModules, run } from './python.ts';

const SCRIPT = 'examples/backtest.py';
const doc = readFileSync(new URL('../../docs/warehouse.md', import.meta.url), 'utf8');
const script = readFileSync(new URL(`../../${SCRIPT}`, import.meta.url), 'utf8');

/** The doc's "Time and history" section, where the backtest lives. */
function timeSection(): string {
  const start = doc.indexOf('\n## Time and history');
  expect(start, 'docs/warehouse.md has a "## Time and history" section').toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

function backtestSql(): string {
  const blocks = [...timeSection().matchAll(/```sql\n(-- example: backtest-no-look-ahead\n[\s\S]*?)```/g)];
  expect(blocks.length, 'one ```sql block marked "-- example: backtest-no-look-ahead"').toBe(1);
  return blocks[0]![1]!;
}

/** The doc's query with its `decisions` list replaced by the given instants. */
function backtestSqlAt(instants: string[]): string {
  const list = instants.map((i) => `'${i}'`).join(', ');
  return withDecisions(backtestSql(), `  select unnest(array[${list}]::timestamptz[]) as at`);
}

interface Pick {
  slug: string;
  multiple30d: string;
  emc: string | null;
}

/** What the doc promises, from the simulator's truth: the 3 listed tokens cheapest by 30-day P/FCF. */
function expectedPicks(data: SimDataset): Pick[] {
  const listed = new Set(data.appTokens().map((t) => t.slug));
  return data
    .appScreenerRows()
    .filter((r) => listed.has(r.token.slug) && r.multiples['30d'].value !== null && compareDecimal(r.multiples['30d'].value, '0') > 0)
    .map((r) => ({ slug: r.token.slug, multiple30d: r.multiples['30d'].value!, emc: r.effectiveMarketCap.value }))
    .sort((a, b) => compareDecimal(a.multiple30d, b.multiple30d) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
    .slice(0, 3);
}

/** An instant as Postgres or Python prints it ('2026-07-01 00:00:00.5+00', '2026-07-01T00:00:00.5+00:00'), in ms. */
const instantMs = (s: string) => Date.parse(s.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));

interface Printed {
  at: string;
  rank: string;
  slug: string;
  multiple30d: string;
  emc: string;
}

/** Tab-separated lines of (at, rank, token_slug, multiple_30d, effective_market_cap), grouped by instant in order. */
function groupByInstant(stdout: string): { at: string; picks: Printed[] }[] {
  const groups: { at: string; picks: Printed[] }[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.split('\t');
    if (f.length !== 5 || Number.isNaN(instantMs(f[0]!))) continue;
    const p: Printed = { at: f[0]!, rank: f[1]!, slug: f[2]!, multiple30d: f[3]!, emc: f[4]! };
    if (groups.at(-1)?.at !== p.at) groups.push({ at: p.at, picks: [] });
    groups.at(-1)!.picks.push(p);
  }
  return groups;
}

const asPrinted = (picks: Pick[]) => picks.map((p, i) => ({ rank: String(i + 1), slug: p.slug, multiple30d: p.multiple30d, emc: p.emc ?? 'null' }));
const withoutAt = (picks: Printed[]) => picks.map(({ rank, slug, multiple30d, emc }) => ({ rank, slug, multiple30d, emc }));
const sameInstant = (a: string, b: string) => instantMs(a) === instantMs(b);

describe('docs/warehouse.md: a backtest without look-ahead', () => {
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 5, chartsPerToken: 1, seed: 42 });
  let epoch0: SimDataset;
  let epoch1: SimDataset;
  /** after the epoch-0 run finished, before the epoch-1 run started */
  let between: string;
  /** after the epoch-1 run finished */
  let after: string;
  /** when the epoch-1 run started */
  let secondStarted: string;

  /**
   * The picks an instant must see, from what was served before it: none before the first run,
   * epoch 0's between the runs, epoch 1's after the second; undefined while a run was under way
   * (a default instant, the end of a UTC day, can fall there when the test runs at midnight).
   */
  function expectedAt(instant: string): Pick[] | undefined {
    const ms = instantMs(instant);
    if (ms >= instantMs(after)) return expectedPicks(epoch1);
    if (ms >= instantMs(between) && ms < instantMs(secondStarted)) return expectedPicks(epoch0);
    return undefined;
  }
  /** Groups printed for the default instants (the last seven UTC day ends, the last one now). */
  function checkDefaultInstants(groups: { at: string; picks: Printed[] }[]) {
    expect(groups.length).toBeGreaterThan(0);
    expect(instantMs(groups.at(-1)!.at), 'the last default instant is now, after both syncs').toBeGreaterThanOrEqual(instantMs(after));
    for (const g of groups) {
      const expected = expectedAt(g.at);
      if (expected) expect(withoutAt(g.picks), `picks at ${g.at}`).toEqual(asPrinted(expected));
    }
  }

  beforeAll(async () => {
    const { logger } = createTestLogger();
    epoch0 = fx.sim.data;
    expect((await fx.sync(logger, {}, ['app'])).status).toBe('succeeded');
    fx.sim.setEpoch(1);
    epoch1 = fx.sim.data;
    expect((await fx.sync(logger, {}, ['app'])).status).toBe('succeeded');
    const runs = await fx.warehouse.query<{ started: string; finished: string }>(
      sql`select to_json(started_at) #>> '{}' as started, to_json(finished_at) #>> '{}' as finished from sync.runs order by started_at`,
    );
    expect(runs).toHaveLength(2);
    between = runs[0]!.finished;
    after = runs[1]!.finished;
    secondStarted = runs[1]!.started;
    expect(Date.parse(between)).toBeLessThanOrEqual(Date.parse(runs[1]!.started));
  });

  it('tells the epochs apart: the picks lose the delisted token, and aurora is revised', () => {
    const changes = epoch1.epochChanges;
    const [p0, p1] = [expectedPicks(epoch0), expectedPicks(epoch1)];
    expect(p0.map((p) => p.slug)).toContain(changes.delistedSlug);
    expect(p1.map((p) => p.slug)).not.toContain(changes.delistedSlug);
    expect(p0.find((p) => p.slug === changes.revised!.slug)?.emc).toBe(changes.revised!.app.before);
    expect(p1.find((p) => p.slug === changes.revised!.slug)?.emc).toBe(changes.revised!.app.after);
  });

  it("the docs' SQL picks, at each instant, what was served before it", async () => {
    const text = backtestSqlAt([between, after]).trim().replace(/;$/, '');
    const rows = await fx.warehouse.query<{ at: string; rank: string; token_slug: string; m: string; emc: string | null }>(
      sql.raw(`select to_json(at) #>> '{}' as at, rank::text, token_slug, multiple_30d::text as m, effective_market_cap::text as emc from (${text}) q order by q.at, q.rank`),
    );
    const at = (instant: string) =>
      rows.filter((r) => r.at === instant).map((r) => ({ rank: r.rank, slug: r.token_slug, multiple30d: r.m, emc: r.emc ?? 'null' }));
    expect(at(between)).toEqual(asPrinted(expectedPicks(epoch0)));
    expect(at(after)).toEqual(asPrinted(expectedPicks(epoch1)));
    expect(rows).toHaveLength(at(between).length + at(after).length);
  });

  it("psql runs the docs' SQL: as written (the last instant is now) and at the runs' instants", async () => {
    const env = { PGTZ: 'UTC' };
    const psql = (input: string) => run('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-d', fx.databaseUrl, '-f', '-'], { input, extraEnv: env });

    const asWritten = await psql(backtestSql());
    expect(asWritten.error, 'the psql client is installed (Debian: postgresql-client)').toBeUndefined();
    expect(asWritten.stderr).toBe('');
    expect(asWritten.code).toBe(0);
    checkDefaultInstants(groupByInstant(asWritten.stdout));

    const replayed = await psql(backtestSqlAt([between, after]));
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    const groups = groupByInstant(replayed.stdout);
    expect(groups).toHaveLength(2);
    expect(sameInstant(groups[0]!.at, between)).toBe(true);
    expect(sameInstant(groups[1]!.at, after)).toBe(true);
    expect(withoutAt(groups[0]!.picks)).toEqual(asPrinted(expectedPicks(epoch0)));
    expect(withoutAt(groups[1]!.picks)).toEqual(asPrinted(expectedPicks(epoch1)));
  });

  it('the docs quote examples/backtest.py as it is', () => {
    const blocks = [...timeSection().matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks, `the "Time and history" section quotes ${SCRIPT} in a \`\`\`python block`).toContain(script);
  });

  it(`${SCRIPT} prints the same picks, as Decimals equal digit for digit to the stored numerics`, async () => {
    const python = await pythonWithModules(SCRIPT);
    const env = { DATABASE_URL: fx.databaseUrl };
    const out = await run(python, ['-B', SCRIPT, between, after], { extraEnv: env });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    // The frame's numbers are Decimals, not float64: pandas shows them as dtype object.
    expect(out.stdout).toMatch(/^multiple_30d\s+object$/m);
    expect(out.stdout).toMatch(/^effective_market_cap\s+object$/m);
    const groups = groupByInstant(out.stdout);
    expect(groups).toHaveLength(2);
    expect(sameInstant(groups[0]!.at, between)).toBe(true);
    expect(sameInstant(groups[1]!.at, after)).toBe(true);
    for (const [g, instant, data] of [[groups[0]!, between, epoch0], [groups[1]!, after, epoch1]] as const) {
      expect(withoutAt(g.picks)).toEqual(asPrinted(expectedPicks(data)));
      const stored = await fx.warehouse.query<{ token_slug: string; m: string; emc: string | null }>(
        sql`select token_slug, multiple_30d::text as m, effective_market_cap::text as emc from app.screener_rows_as_of(${instant}::timestamptz)`,
      );
      for (const p of g.picks) {
        const s = stored.find((r) => r.token_slug === p.slug);
        expect({ slug: p.slug, m: p.multiple30d, emc: p.emc }).toEqual({ slug: p.slug, m: s?.m, emc: s?.emc ?? 'null' });
      }
    }

    // Without instants: the end of each of the last seven UTC days, the last one now.
    const byDefault = await run(python, ['-B', SCRIPT], { extraEnv: env });
    expect(byDefault.stderr).toBe('');
    expect(byDefault.code).toBe(0);
    checkDefaultInstants(groupByInstant(byDefault.stdout));
  });
});
