// The simulator's paged lists (sim/paging.ts): each form names the next page until the last;
// the pages together are the whole list; a larger total and a looping next link on demand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_FORMS, startSimulator, type PageForm, type Simulator } from '../../sim/index.ts';
import { get, type Res } from './support.ts';

const GW = 'sim_gateway_key_0001';
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ tokens: 7, historyDays: 3, chartsPerToken: 2, gatewayKeys: [GW] });
});
afterAll(() => sim?.close());

const fetchPage = (path: string) => get(`${sim.url}${path}`, { authorization: `Bearer ${GW}` });

/** The next page's path as the form names it, or null. */
function nextOf(form: PageForm, res: Res, path: string): string | null {
  const base = `${sim.url}${path}`;
  if (form === 'metaNext') return res.json.meta.next ?? null;
  if (form === 'linksNext') return res.json.links?.next ? new URL(res.json.links.next).pathname + new URL(res.json.links.next).search : null;
  if (form === 'cursor') return res.json.meta.nextCursor ? `${path.split('?')[0]}?cursor=${res.json.meta.nextCursor}` : null;
  if (form === 'topNext') return res.json.next ? new URL(res.json.next).pathname + new URL(res.json.next).search : null;
  if (form === 'topCursor') return res.json.next_cursor ? `${path.split('?')[0]}?cursor=${res.json.next_cursor}` : null;
  const link = res.headers.get('link');
  if (!link) return null;
  const u = new URL(/^<([^>]*)>; rel="next"$/.exec(link)![1]!, base);
  return u.pathname + u.search;
}

async function walk(form: PageForm, first: string): Promise<{ items: unknown[]; pages: Res[] }> {
  const pages: Res[] = [];
  let path: string | null = first;
  while (path !== null && pages.length < 50) {
    const res = await fetchPage(path);
    expect(res.status, path).toBe(200);
    pages.push(res);
    path = nextOf(form, res, path);
  }
  return { items: pages.flatMap((p) => p.json.data as unknown[]), pages };
}

describe('paged lists', () => {
  it.each(PAGE_FORMS)('%s: the pages together are the whole list, each counting itself', async (form) => {
    sim.setPaging({ pageSize: 3, form, total: 'exact', loop: false });
    try {
      for (const route of ['/api/v1/tokens', '/v1/tokens', '/api/v1/screener', '/v1/screener']) {
        sim.setPaging({ pageSize: 0 });
        const whole = (await fetchPage(route)).json;
        sim.setPaging({ pageSize: 3 });
        const { items, pages } = await walk(form, route);
        expect(items, route).toEqual(whole.data);
        expect(pages).toHaveLength(Math.ceil(whole.data.length / 3));
        for (const [i, p] of pages.entries()) {
          expect(p.json.meta.count).toBe(p.json.data.length);
          expect(p.json.meta.total).toBe(whole.data.length);
          // Each form names the next page in its own place only.
          const last = i === pages.length - 1;
          const places = { metaNext: p.json.meta.next, linksNext: p.json.links, linkHeader: p.headers.get('link') ?? undefined, cursor: p.json.meta.nextCursor, topNext: p.json.next, topCursor: p.json.next_cursor };
          expect(Object.entries(places).filter(([, v]) => v !== undefined).map(([k]) => k), `${route} page ${i + 1}`).toEqual(last ? [] : [form]);
          if (form === 'topNext' && !last) expect(p.json.next.startsWith(`${sim.url}${route}?`)).toBe(true);
          expect(p.json.has_more, `${route} page ${i + 1}`).toBe(form === 'topCursor' ? !last : undefined);
        }
      }
      const slug = sim.data.appTokens().find((t) => t.coverage.charts)!.slug;
      sim.setPaging({ pageSize: 1 });
      expect((await walk(form, `/api/v1/tokens/${slug}/charts`)).items).toHaveLength(sim.data.appCharts(slug)!.length);
    } finally {
      sim.setPaging({ pageSize: 0 });
    }
  });

  it('a page size beyond the list serves one page naming no next; history and other routes are never paged', async () => {
    sim.setPaging({ pageSize: 100, form: 'linkHeader' });
    try {
      const res = await fetchPage('/v1/tokens');
      expect(res.headers.get('link')).toBeNull();
      expect(res.json.data).toHaveLength(sim.data.gatewayTokens().length);
      sim.setPaging({ pageSize: 1 });
      const slug = sim.data.appTokens()[0]!.slug;
      const snap = await fetchPage(`/api/v1/tokens/${slug}`);
      expect(snap.headers.get('link')).toBeNull();
      expect(snap.json.meta.total).toBeUndefined();
    } finally {
      sim.setPaging({ pageSize: 0 });
    }
  });

  it('a larger total, a missing one, and a loop on demand; a page beyond the end is a 400', async () => {
    sim.setPaging({ pageSize: 3, form: 'metaNext', total: 'larger' });
    try {
      const n = sim.data.appTokens().length;
      expect((await fetchPage('/api/v1/tokens')).json.meta.total).toBe(n + 1);
      sim.setPaging({ total: 'none' });
      expect((await fetchPage('/api/v1/tokens')).json.meta).not.toHaveProperty('total');
      sim.setPaging({ total: 'exact', loop: true });
      const last = await fetchPage(`/api/v1/tokens?page=${Math.ceil(n / 3)}`);
      expect(last.json.meta.next).toBe('/api/v1/tokens?page=2');
      sim.setPaging({ pageSize: 100, form: 'cursor' });
      const only = await fetchPage('/api/v1/tokens');
      expect(only.json.meta.nextCursor).toBeTruthy();
      expect((await fetchPage(`/api/v1/tokens?cursor=${only.json.meta.nextCursor}`)).json.meta.nextCursor).toBe(only.json.meta.nextCursor);
      sim.setPaging({ form: 'topCursor' });
      const top = await fetchPage('/api/v1/tokens');
      expect([top.json.next_cursor, top.json.has_more]).toEqual([only.json.meta.nextCursor, true]);
      expect((await fetchPage('/v1/tokens?cursor=nonsense')).json).toMatchObject({ status: 400, parameter: 'cursor' });
      sim.setPaging({ loop: false, form: 'metaNext', pageSize: 3 });
      const beyond = await fetchPage('/api/v1/tokens?page=99');
      expect(beyond.status).toBe(400);
      expect((await fetchPage('/v1/tokens?page=0')).status).toBe(400);
      expect((await fetchPage('/api/v1/tokens?cursor=nonsense')).status).toBe(200);
    } finally {
      sim.setPaging({ pageSize: 0, loop: false, total: 'exact', form: 'metaNext' });
    }
  });

  it('refuses options it cannot serve', async () => {
    await expect(startSimulator({ paging: { pageSize: -1 } })).rejects.toThrow(/pageSize/);
    await expect(startSimulator({ paging: { form: 'pages' as PageForm } })).rejects.toThrow(/form/);
  });
});
