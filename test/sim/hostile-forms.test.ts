// The simulator's hostile forms: strings Postgres cannot hold (U+0000, a lone surrogate) served
// as JSON escapes in answers only; ETags and 304s; a paged list that changes between its pages;
// and the sha256 of every body written, recorded per request.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type HostileChar, type HostilePlace, type RecordedRequest, type SimHostile, type Simulator } from '../../sim/index.ts';

const KEY = 'sim_app_key_0001';
const GW = 'sim_gateway_key_0001';
const SEED = 42;
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const EMPTY_SHA = sha256('');

let sim: Simulator;
// A clock that moves a second per reading: every answer has a servedAt of its own.
let clock = Date.parse('2026-07-01T00:00:00.000Z');
beforeAll(async () => {
  sim = await startSimulator({
    seed: SEED,
    tokens: 7,
    historyDays: 3,
    chartsPerToken: 1,
    appKeys: { [KEY]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [GW],
    now: () => (clock += 1000),
  });
});
afterAll(() => sim?.close());

interface Raw {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  record: RecordedRequest;
}

/** GET through Node's fetch, the body as the bytes received, with the simulator's record of it. */
async function fetchRaw(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const auth: Record<string, string> = path.startsWith('/v1/') ? { authorization: `Bearer ${GW}` } : path.endsWith('/full') ? { authorization: `Bearer ${KEY}` } : {};
  const r = await fetch(`${sim.url}${path}`, { headers: { ...auth, ...headers } });
  const bytes = Buffer.from(await r.arrayBuffer());
  const id = r.headers.get('x-request-id') ?? '';
  expect(id).toMatch(new RegExp(`^sim-${SEED}-\\d+$`));
  const seq = Number(id.split('-').pop());
  const record = sim.requests.find((q) => q.seq === seq);
  if (!record) throw new Error(`no record of request ${id}`);
  return { status: r.status, headers: r.headers, bytes, text: bytes.toString('utf8'), record };
}

// ---- hostile strings ----

const CHAR: Record<HostileChar, string> = { nul: '\u0000', surrogate: '\ud83d' };
const ESCAPE: Record<HostileChar, string> = { nul: '\\u0000', surrogate: '\\ud83d' };
/** the char itself in a JS string (a surrogate only where no low surrogate follows: not a 🚀's half) */
const HOLDS: Record<HostileChar, RegExp> = { nul: /\u0000/, surrogate: /\ud83d(?![\udc00-\udfff])/ };

/** every place in a parsed JSON value where a string or an object key holds `re`: `.k` a value, `{k}` a key */
function placesOf(value: unknown, re: RegExp, path = '$'): string[] {
  if (typeof value === 'string') return re.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => placesOf(v, re, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [...(re.test(k) ? [`${path}{${k}}`] : []), ...placesOf(v, re, `${path}.${k}`)]);
  }
  return [];
}

interface Case {
  hostile: SimHostile;
  route: (slug: string) => string;
  /** the JSON path holding it, given the served body (to find the item's index) */
  where: (body: any, slug: string) => string;
  /** what is found there (for 'objectKey': the key) */
  text: (c: string) => string;
  /** the truth the route is made from, which must not change */
  truth: (slug: string) => unknown;
}

const CASES: Record<string, (char: HostileChar) => Case> = {
  'tokenName (app)': (char) => ({
    hostile: { place: 'tokenName', char },
    route: () => '/api/v1/tokens',
    where: (b, slug) => `$.data[${b.data.findIndex((t: any) => t.slug === slug)}].displayName`,
    text: (c) => `O'Reilly "Quote" ${c}NUL 🚀 Token`,
    truth: () => sim.data.appTokens(),
  }),
  'tokenName (gateway)': (char) => ({
    hostile: { place: 'tokenName', char, source: 'gateway' },
    route: () => '/v1/tokens',
    where: (b, slug) => `$.data[${b.data.findIndex((t: any) => t.slug === slug)}].name`,
    text: (c) => `O'Reilly "Quote" ${c}NUL 🚀 Token`,
    truth: () => sim.data.gatewayTokens(),
  }),
  snapshotField: (char) => ({
    hostile: { place: 'snapshotField', char },
    route: (slug) => `/api/v1/tokens/${slug}`,
    where: () => '$.data.streams[0].label',
    text: (c) => `Fees ${c} stream`,
    truth: (slug) => sim.data.appSnapshot(slug),
  }),
  bundleString: (char) => ({
    hostile: { place: 'bundleString', char },
    route: (slug) => `/api/v1/tokens/${slug}/full`,
    where: () => '$.data.valueDrivers[0].description',
    text: (c) => `Driver ${c} note`,
    truth: (slug) => sim.data.researchBundle(slug),
  }),
  objectKey: (char) => ({
    hostile: { place: 'objectKey', char },
    route: (slug) => `/api/v1/tokens/${slug}`,
    where: (_b, _s) => `$.data.labels{note${CHAR[char]}}`,
    text: (c) => `note${c}`,
    truth: (slug) => sim.data.appSnapshot(slug),
  }),
  'chartPoint (app)': (char) => ({
    hostile: { place: 'chartPoint', char },
    route: (slug) => `/api/v1/tokens/${slug}/charts/${sim.data.appCharts(slug)![0]!.key}`,
    where: () => '$.data.rows[1][0]',
    text: (c) => `Point ${c} key`,
    truth: (slug) => sim.data.appChartData(slug, sim.data.appCharts(slug)![0]!.key),
  }),
  'chartPoint (gateway)': (char) => ({
    hostile: { place: 'chartPoint', char, source: 'gateway' },
    route: (slug) => `/v1/tokens/${slug}/charts/${sim.data.gatewayCharts(slug)![0]!.key}?timeframe=${sim.data.gatewayCharts(slug)![0]!.timeframes[0]}`,
    where: () => `$.data.data[1]{Point ${CHAR[char]} key}`,
    text: (c) => `Point ${c} key`,
    truth: (slug) => sim.data.gatewayChartData(slug, sim.data.gatewayCharts(slug)![0]!.key, sim.data.gatewayCharts(slug)![0]!.timeframes[0]!),
  }),
};

const CHARS: HostileChar[] = ['nul', 'surrogate'];
const MATRIX = Object.keys(CASES).flatMap((name) => CHARS.map((char) => [name, char] as const));

describe('hostile strings', () => {
  it.each(MATRIX)('%s, %s: the body carries the escape there and only there; the truth is clean', async (name, char) => {
    const c = CASES[name]!(char);
    const first = (c.hostile.source === 'gateway' ? sim.data.gatewayTokens() : sim.data.appTokens())[0]!.slug;
    const truthBefore = JSON.stringify(c.truth(first));
    sim.setHostile([c.hostile]);
    try {
      const res = await fetchRaw(c.route(first));
      expect(res.status).toBe(200);
      // On the wire: the escape, once, in ASCII; neither a raw NUL byte nor a lone surrogate
      // written as UTF-8 (which comes out as EF BF BD) anywhere.
      expect(res.text.split(ESCAPE[char]).length - 1).toBe(1);
      expect(res.bytes.includes(0x00)).toBe(false);
      expect(res.bytes.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false);
      if (c.hostile.place === 'tokenName') expect(res.bytes.includes(Buffer.from('🚀', 'utf8'))).toBe(true);
      // Parsed: the char sits at the one expected path, in the expected text.
      const body = JSON.parse(res.text);
      expect(placesOf(body, HOLDS[char])).toEqual([c.where(body, first)]);
      if (c.hostile.place === 'objectKey') expect(body.data.labels).toEqual({ [c.text(CHAR[char])]: 'x' });
      else if (c.hostile.place === 'chartPoint' && c.hostile.source === 'gateway') expect(body.data.data[1][c.text(CHAR[char])]).toBe('1');
      else expect(lookup(body, c.where(body, first))).toBe(c.text(CHAR[char]));
      // Only the answer changed: the truth keeps its clean value, with no such char in it.
      expect(JSON.stringify(c.truth(first))).toBe(truthBefore);
      expect(truthBefore.includes(ESCAPE[char])).toBe(false);
    } finally {
      sim.setHostile([]);
    }
    // Unset, the same route serves no such char.
    const clean = await fetchRaw(c.route(first));
    expect(clean.text.includes(ESCAPE[char])).toBe(false);
    expect(placesOf(JSON.parse(clean.text), HOLDS[char])).toEqual([]);
  });

  it('goes to the token named by slug, on every page that carries it, and to no other', async () => {
    const tokens = sim.data.appTokens();
    // a token with a snapshot, on the last page of three
    const target = tokens[4]!.slug;
    expect(sim.data.appSnapshot(target)).not.toBeNull();
    sim.setHostile([
      { place: 'tokenName', char: 'nul', slug: target },
      { place: 'snapshotField', char: 'surrogate', slug: target },
    ]);
    sim.setPaging({ pageSize: 2, form: 'metaNext' });
    try {
      // tokens[4] is the first item of page 3, on every read of it
      for (let read = 0; read < 2; read++) {
        const pages = [await fetchRaw('/api/v1/tokens'), await fetchRaw('/api/v1/tokens?page=2'), await fetchRaw('/api/v1/tokens?page=3')];
        expect(pages.map((p) => placesOf(JSON.parse(p.text), HOLDS.nul))).toEqual([[], [], ['$.data[0].displayName']]);
        expect(JSON.parse(pages[2]!.text).data[0].slug).toBe(target);
      }
      // The first token's snapshot is untouched; the target's carries it.
      const [other, mine] = [await fetchRaw(`/api/v1/tokens/${tokens[0]!.slug}`), await fetchRaw(`/api/v1/tokens/${target}`)];
      expect([other.status, mine.status]).toEqual([200, 200]);
      expect(placesOf(JSON.parse(other.text), HOLDS.surrogate)).toEqual([]);
      expect(placesOf(JSON.parse(mine.text), HOLDS.surrogate)).toEqual(['$.data.streams[0].label']);
    } finally {
      sim.setHostile([]);
      sim.setPaging({ pageSize: 0 });
    }
  });

  it('refuses a place, a char or a source it does not know, and gateway for app places', () => {
    expect(() => sim.setHostile([{ place: 'nowhere' as HostilePlace, char: 'nul' }])).toThrow(/place/);
    expect(() => sim.setHostile([{ place: 'tokenName', char: 'bell' as HostileChar }])).toThrow(/char/);
    expect(() => sim.setHostile([{ place: 'snapshotField', char: 'nul', source: 'gateway' }])).toThrow(/gateway/);
  });
});

/** the value at a path as placesOf writes it (`.k` and `[i]` steps) */
function lookup(body: unknown, path: string): unknown {
  let v: any = body;
  for (const m of path.slice(1).matchAll(/\.([^.[{]+)|\[(\d+)\]/g)) v = m[1] !== undefined ? v?.[m[1]] : v?.[Number(m[2])];
  return v;
}

// ---- what was written ----

describe('bodySha256', () => {
  it('is the sha256 of the bytes the client received: a 200, a hostile body, a problem, a padded and an invalid body', async () => {
    const slug = sim.data.appTokens()[0]!.slug;
    const seen: Raw[] = [await fetchRaw('/api/v1/tokens'), await fetchRaw('/v1/screener'), await fetchRaw('/api/v1/tokens/no-such-token')];
    sim.setHostile([{ place: 'objectKey', char: 'surrogate' }]);
    seen.push(await fetchRaw(`/api/v1/tokens/${slug}`));
    sim.setHostile([]);
    sim.setFaults({ hugeBodyBytes: 300_000, pathFilter: '/api/v1/metrics' });
    seen.push(await fetchRaw('/api/v1/metrics'));
    sim.setFaults({ hugeBodyBytes: 0, invalidJsonRate: 1 });
    seen.push(await fetchRaw('/api/v1/metrics'));
    sim.clearFaults();
    expect(seen.map((r) => r.status)).toEqual([200, 200, 404, 200, 200, 200]);
    expect(seen[4]!.bytes.length).toBe(300_000);
    expect(seen[5]!.text.startsWith('<!DOCTYPE html>')).toBe(true);
    for (const r of seen) {
      expect(r.bytes.length).toBeGreaterThan(0);
      expect(r.record.bodySha256, r.record.path).toBe(sha256(r.bytes));
      expect(r.record.ifNoneMatch).toBeUndefined();
    }
    // every answer's own: no two of these bodies are alike
    expect(new Set(seen.map((r) => r.record.bodySha256)).size).toBe(seen.length);
  });
});

// ---- ETags ----

/** the tag as the simulator defines it: sha256 of the body without its `"servedAt":"…",` member */
function expectedTag(text: string): string {
  const servedAt = JSON.parse(text).meta.servedAt as string;
  const member = `"servedAt":${JSON.stringify(servedAt)},`;
  expect(text.split(member).length - 1).toBe(1);
  return `"${sha256(text.replace(member, ''))}"`;
}

describe('ETags and 304', () => {
  it('are off by default: no ETag, If-None-Match ignored', async () => {
    const a = await fetchRaw('/api/v1/tokens');
    expect(a.headers.get('etag')).toBeNull();
    const b = await fetchRaw('/api/v1/tokens', { 'if-none-match': '*' });
    expect(b.status).toBe(200);
    expect(b.record.ifNoneMatch).toBe('*');
  });

  it('tag each 200 by its data; a matching If-None-Match gets 304 with no body; a new epoch a new tag', async () => {
    sim.setEtags(true);
    try {
      const a = await fetchRaw('/api/v1/tokens');
      const tag = a.headers.get('etag')!;
      expect(tag).toMatch(/^"[0-9a-f]{64}"$/);
      expect(tag).toBe(expectedTag(a.text));
      // Same data, another servedAt: the same tag.
      const b = await fetchRaw('/api/v1/tokens');
      expect(JSON.parse(b.text).meta.servedAt).not.toBe(JSON.parse(a.text).meta.servedAt);
      expect(b.headers.get('etag')).toBe(tag);

      for (const inm of [tag, `W/${tag}`, `"0000", ${tag}`, `W/"nope" ,W/${tag}`, '*']) {
        const nm = await fetchRaw('/api/v1/tokens', { 'if-none-match': inm });
        expect(nm.status, inm).toBe(304);
        expect(nm.bytes.length).toBe(0);
        expect(nm.headers.get('etag')).toBe(tag);
        expect(nm.headers.get('content-length')).toBeNull();
        expect(nm.record).toMatchObject({ status: 304, ifNoneMatch: inm, bodySha256: EMPTY_SHA });
      }
      const miss = await fetchRaw('/api/v1/tokens', { 'if-none-match': '"0000", W/"1111"' });
      expect(miss.status).toBe(200);
      expect(miss.headers.get('etag')).toBe(tag);
      expect(miss.record.bodySha256).toBe(sha256(miss.bytes));

      // The gateway too, with the Cache-Control its 200 has.
      const gw = await fetchRaw('/v1/tokens');
      const gwTag = gw.headers.get('etag')!;
      expect(gwTag).toBe(expectedTag(gw.text));
      expect(gwTag).not.toBe(tag);
      const gw304 = await fetchRaw('/v1/tokens', { 'if-none-match': gwTag });
      expect(gw304.status).toBe(304);
      expect(gw304.headers.get('cache-control')).toBe(gw.headers.get('cache-control'));
      // Another resource's tag does not match.
      expect((await fetchRaw('/v1/tokens', { 'if-none-match': tag })).status).toBe(200);

      // A new epoch changes the data: 200 with a new tag; back at epoch 0 the old tag holds again.
      sim.setEpoch(1);
      const e1 = await fetchRaw('/api/v1/tokens', { 'if-none-match': tag });
      expect(e1.status).toBe(200);
      const tag1 = e1.headers.get('etag')!;
      expect(tag1).toMatch(/^"[0-9a-f]{64}"$/);
      expect(tag1).not.toBe(tag);
      expect(tag1).toBe(expectedTag(e1.text));
      expect((await fetchRaw('/api/v1/tokens', { 'if-none-match': tag1 })).status).toBe(304);
      sim.setEpoch(0);
      expect((await fetchRaw('/api/v1/tokens', { 'if-none-match': tag })).status).toBe(304);

      // A hostile string is a change of the body, too.
      sim.setHostile([{ place: 'tokenName', char: 'nul' }]);
      const h = await fetchRaw('/api/v1/tokens', { 'if-none-match': tag });
      sim.setHostile([]);
      expect(h.status).toBe(200);
      expect(h.headers.get('etag')).not.toBe(tag);
    } finally {
      sim.setEtags(false);
      sim.setEpoch(0);
    }
    // Off again: If-None-Match is ignored.
    const off = await fetchRaw('/api/v1/tokens', { 'if-none-match': '*' });
    expect(off.status).toBe(200);
    expect(off.headers.get('etag')).toBeNull();
  });

  it('a 304 counts on the rate limit like any answer; problems carry no ETag', async () => {
    sim.setEtags(true);
    sim.setRateLimits({ appPublic: { limit: 3, windowMs: 3_600_000 } });
    try {
      const a = await fetchRaw('/api/v1/metrics');
      const tag = a.headers.get('etag')!;
      const b = await fetchRaw('/api/v1/metrics', { 'if-none-match': tag });
      const c = await fetchRaw('/api/v1/metrics', { 'if-none-match': tag });
      const d = await fetchRaw('/api/v1/metrics', { 'if-none-match': tag });
      expect([a, b, c, d].map((r) => r.status)).toEqual([200, 304, 304, 429]);
      expect([a, b, c].map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0']);
      expect(d.headers.get('etag')).toBeNull();
    } finally {
      sim.setRateLimits({});
      sim.setEtags(false);
    }
  });
});

// ---- a list that changes between its pages ----

interface Read {
  totals: number[];
  slugs: string[][];
}

/** one read of a paged list: page 1, then each next page it names */
async function readList(first: string): Promise<Read> {
  const read: Read = { totals: [], slugs: [] };
  let path: string | null = first;
  while (path !== null && read.totals.length < 10) {
    const res = await fetchRaw(path);
    expect(res.status, path).toBe(200);
    const body = JSON.parse(res.text);
    read.totals.push(body.meta.total);
    read.slugs.push(body.data.map((t: { slug: string }) => t.slug));
    path = body.meta.next ?? (body.meta.nextCursor ? `${first.split('?')[0]}?cursor=${body.meta.nextCursor}` : null);
  }
  return read;
}

describe('page drift', () => {
  const whole = () => sim.data.appTokens().map((t) => t.slug);

  it('serves disagreeing totals on the first N reads of each list, then consistent pages', async () => {
    const all = whole();
    expect(all).toHaveLength(7);
    sim.setPaging({ pageSize: 3, form: 'metaNext', drift: 2 });
    try {
      // The list without its first item from page 2 on: all[3] falls into page 1's range.
      const drifted: Read = { totals: [7, 6], slugs: [all.slice(0, 3), all.slice(4, 7)] };
      const consistent: Read = { totals: [7, 7, 7], slugs: [all.slice(0, 3), all.slice(3, 6), all.slice(6)] };
      expect(await readList('/api/v1/tokens')).toEqual(drifted);
      expect(await readList('/api/v1/tokens')).toEqual(drifted);
      // Counted per list: the gateway's list (and the app's with another query) has reads of its own.
      const gwAll = sim.data.gatewayTokens().map((t) => t.slug);
      expect(await readList('/v1/tokens')).toEqual({ totals: [gwAll.length, gwAll.length - 1], slugs: [gwAll.slice(0, 3), gwAll.slice(4, 7)] });
      expect(await readList('/api/v1/tokens?x=1')).toEqual(drifted);
      // After N reads: consistent, read after read.
      expect(await readList('/api/v1/tokens')).toEqual(consistent);
      expect(await readList('/api/v1/tokens')).toEqual(consistent);

      // Setting drift counts again; Infinity drifts every read, in the cursor form too.
      sim.setPaging({ drift: Infinity, form: 'cursor' });
      for (let i = 0; i < 4; i++) expect(await readList('/api/v1/tokens')).toEqual(drifted);
      // A page page 1 named but the shorter list lacks: served empty, not refused.
      sim.setPaging({ pageSize: 6, form: 'metaNext' });
      const short = await readList('/api/v1/tokens');
      expect(short).toEqual({ totals: [7, 6], slugs: [all.slice(0, 6), []] });

      sim.setPaging({ drift: 0, pageSize: 3 });
      expect(await readList('/api/v1/tokens')).toEqual(consistent);
    } finally {
      sim.setPaging({ pageSize: 0, drift: 0, form: 'metaNext' });
    }
  });

  it('refuses a drift that is not a count', () => {
    expect(() => sim.setPaging({ drift: -1 })).toThrow(/drift/);
    expect(() => sim.setPaging({ drift: 1.5 })).toThrow(/drift/);
  });
});
