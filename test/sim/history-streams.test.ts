// The app history streams' own metadata (SimOptions.historyStreams): alike by default;
// 'distinct' gives streams and tokens whose interval, units and kinds differ, served as the
// dataset says in every form of `stream=all` that can state them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type AppHistory, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

const TOKENS = 9;
let alike: Simulator;
let distinct: Simulator;
beforeAll(async () => {
  alike = await startSimulator({ tokens: TOKENS, historyDays: 3 });
  distinct = await startSimulator({ tokens: TOKENS, historyDays: 3, historyStreams: 'distinct' });
});
afterAll(async () => {
  await alike?.close();
  await distinct?.close();
});

/** What a stream states of itself: interval and columns[], as one comparable string. */
const metaOf = (d: { interval?: unknown; columns: unknown }) => JSON.stringify([d.interval, d.columns]);
const historied = (sim: Simulator) => sim.data.appTokens().filter((t) => t.coverage.metricHistory).map((t) => t.slug);
const docsOf = (sim: Simulator, slug: string): readonly AppHistory[] => sim.data.appHistory(slug) ?? [];
const sameWithin = (sim: Simulator, slug: string) => new Set(docsOf(sim, slug).map(metaOf)).size === 1;
const allOf = async (sim: Simulator, slug: string) => (await get(`${sim.url}/api/v1/tokens/${slug}/metrics/history?stream=all`)).json.data;

describe('history streams: what each states of itself', () => {
  it("'alike' (the default): every stream of every token '1d' with one columns[]", () => {
    const metas = new Set(historied(alike).flatMap((slug) => docsOf(alike, slug).map(metaOf)));
    expect(metas.size).toBe(1);
    expect(historied(alike).flatMap((slug) => docsOf(alike, slug).map((d) => d.interval))).toEqual(expect.arrayContaining(['1d']));
  });

  it("'distinct': streams of one token differ, tokens differ, the first token as 'alike'; values as 'alike'", () => {
    const slugs = historied(distinct);
    const differing = slugs.filter((slug) => !sameWithin(distinct, slug));
    expect(differing.length).toBeGreaterThanOrEqual(2);
    // Tokens whose streams agree, but not with every other token's.
    const tokenWide = slugs.filter((slug) => sameWithin(distinct, slug) && docsOf(distinct, slug)[0]!.interval === '1w');
    expect(tokenWide.length).toBeGreaterThanOrEqual(2);
    expect(docsOf(distinct, slugs[0]!).map(metaOf)).toEqual(docsOf(alike, slugs[0]!).map(metaOf));
    // Units and kinds differ too, not only intervals.
    const columnSets = new Set(slugs.flatMap((slug) => docsOf(distinct, slug).map((d) => JSON.stringify(d.columns))));
    expect(columnSets.size).toBeGreaterThanOrEqual(3);
    // Only what streams state of themselves differs: the rows are the same data.
    for (const slug of slugs) expect(docsOf(distinct, slug).map((d) => d.rows)).toEqual(docsOf(alike, slug).map((d) => d.rows));
  });

  it('one stream asked for: its own interval and columns[]', async () => {
    const slug = historied(distinct).find((s) => !sameWithin(distinct, s))!;
    for (const doc of docsOf(distinct, slug)) {
      const served = (await get(`${distinct.url}/api/v1/tokens/${slug}/metrics/history?stream=${doc.stream}`)).json.data;
      expect(metaOf(served), doc.stream).toBe(metaOf(doc));
    }
  });

  it("stream=all 'list' and 'keyed': each stream with its own; 'nested': a stream unlike the head states its own interval", async () => {
    const slug = historied(distinct).find((s) => !sameWithin(distinct, s))!;
    const docs = docsOf(distinct, slug);
    try {
      distinct.setForms({ historyAll: 'list' });
      expect((await allOf(distinct, slug)).map(metaOf)).toEqual(docs.map(metaOf));
      distinct.setForms({ historyAll: 'keyed' });
      expect(Object.values<any>(await allOf(distinct, slug)).map(metaOf)).toEqual(docs.map(metaOf));
      distinct.setForms({ historyAll: 'nested' });
      const nested = await allOf(distinct, slug);
      expect(nested.interval).toBe(docs[0]!.interval);
      expect(nested.streams.map((s: any) => s.interval ?? null)).toEqual(docs.map((d) => (d.interval === docs[0]!.interval ? null : d.interval)));
      expect(nested.streams.map((s: any) => JSON.stringify(s.columns))).toEqual(docs.map((d) => JSON.stringify(d.columns)));
    } finally {
      distinct.setForms({ historyAll: 'list' });
    }
  });

  it('the column forms: one MetricHistory for a token whose streams agree, a list for one whose streams differ', async () => {
    const slugs = historied(distinct);
    const agreeing = slugs.find((s) => sameWithin(distinct, s) && docsOf(distinct, s).length > 1 && docsOf(distinct, s)[0]!.interval === '1w')!;
    const differing = slugs.find((s) => !sameWithin(distinct, s))!;
    try {
      for (const form of ['column', 'columnUntyped'] as const) {
        distinct.setForms({ historyAll: form });
        const one = await allOf(distinct, agreeing);
        expect(one).toMatchObject({ stream: 'all', interval: '1w' });
        expect(one.columns[1].key).toBe(form === 'column' ? 'stream' : 'component');
        const list = await allOf(distinct, differing);
        expect(Array.isArray(list), form).toBe(true);
        expect(list.map(metaOf)).toEqual(docsOf(distinct, differing).map(metaOf));
      }
    } finally {
      distinct.setForms({ historyAll: 'list' });
    }
  });

  it('refuses a value it does not know', async () => {
    await expect(startSimulator({ historyStreams: 'odd' as 'alike' })).rejects.toThrow(/historyStreams/);
  });
});
