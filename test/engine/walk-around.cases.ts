// One bad response stops nothing (issue 44), on a real server: a warehouse synced whole once,
// then a full walk against a simulator whose one response is one Postgres cannot store (a NUL
// or an unpaired surrogate in a snapshot field, in a nested bundle string, in an object key;
// in a token list item's name, where the item alone is refused: the list `partial`) or a root
// list that cannot be trusted (cut, with a confirming fetch that disagrees and a third that
// disagrees again; pages that disagree on every read). Each
// time: the run `partial` and closed, the refused resource `invalid` with its body archived
// byte for byte (the sha256 of what the simulator wrote), every other resource fetched in that
// run, and the whole warehouse still equal to the simulator's data. The thin files beside this
// one run it on Postgres and on the embedded server.
//
// The command's part is the same whatever was refused (a run that is not `failed` exits 0): the
// first sync, the first refusal and the last whole sync are `tesync sync --full` as a real
// process, exit code included; the other walks are the same sync (performSync, what `tesync
// sync` runs) in this process, which saves a start-up of the CLI each (seconds of CPU).
import { sql } from 'drizzle-orm';
import { beforeAll, expect, it } from 'vitest';
import type { SimHostile, Simulator } from '../../sim/index.ts';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { runCli } from '../helpers/cli.ts';
import { recordFigure } from '../helpers/fault-figures.ts';
import { expectGatewayMirror } from '../helpers/gateway-mirror.ts';
import { patience } from '../helpers/patience.ts';
import { useSimAndWarehouseOn } from '../helpers/mirror-fixture.ts';
import type { WarehouseServer } from '../helpers/servers.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const TOKENS = 5;

interface Refused {
  source: 'app' | 'gateway';
  resource: string;
  /** The path of the refused response(s). */
  path: string;
  /** What `last_error` says. */
  error: RegExp;
}

interface Case {
  name: string;
  /** Sets the simulator's form; returns what undoes it. */
  arrange(sim: Simulator): Promise<() => void>;
  refused: (sim: Simulator) => Refused;
  /** The list was refused: what it plans was planned from the stored list. */
  plannedFromStored?: boolean;
  /**
   * One item of a list was refused alone (src/engine/kit/item-refusals.ts): the list is `partial`,
   * its details name the item, its body is kept `partial`, the rest of it written.
   */
  itemAlone?: boolean;
}

const first = (sim: Simulator) => sim.data.appTokens()[0]!.slug;
const CHAR_TEXT = { nul: 'U\\+0000', surrogate: 'unpaired surrogate' } as const;

function hostile(place: Exclude<SimHostile['place'], 'chartPoint'>, char: SimHostile['char']): Case {
  const where: Record<Exclude<SimHostile['place'], 'chartPoint'>, { resource: (s: string) => string; path: (s: string) => string; field: string }> = {
    tokenName: { resource: () => 'tokens', path: () => '/api/v1/tokens', field: 'displayName' },
    snapshotField: { resource: (s) => `token/${s}/snapshot`, path: (s) => `/api/v1/tokens/${s}`, field: 'label' },
    bundleString: { resource: (s) => `token/${s}/bundle`, path: (s) => `/api/v1/tokens/${s}/full`, field: 'description' },
    objectKey: { resource: (s) => `token/${s}/snapshot`, path: (s) => `/api/v1/tokens/${s}`, field: 'labels' },
    screenerName: { resource: () => 'screener', path: () => '/api/v1/screener', field: 'displayName' },
  };
  const w = where[place];
  return {
    name: `${char === 'nul' ? 'a NUL' : 'an unpaired surrogate'} in ${place}`,
    async arrange(sim) {
      sim.setHostile([{ place, char }]);
      return () => sim.setHostile([]);
    },
    refused: (sim) => ({ source: 'app', resource: w.resource(first(sim)), path: w.path(first(sim)), error: new RegExp(`${w.field}.*${CHAR_TEXT[char]}`) }),
    itemAlone: place === 'tokenName',
  };
}

/** The app token list as the simulator serves it, cut to `n` items and without a count. */
async function cutList(sim: Simulator, n: number): Promise<string> {
  const body = JSON.parse(await (await fetch(`${sim.url}/api/v1/tokens`)).text()) as { data: unknown[]; meta: Record<string, unknown> };
  return JSON.stringify({ data: body.data.slice(0, n), meta: { asOf: body.meta.asOf } });
}

export const CASES: Case[] = [
  ...(['tokenName', 'snapshotField', 'bundleString', 'objectKey'] as const).flatMap((p) => [hostile(p, 'nul'), hostile(p, 'surrogate')]),
  {
    name: 'a root list cut short, whose confirming fetch disagrees, and a third that disagrees again',
    async arrange(sim) {
      const whole = await (await fetch(`${sim.url}/api/v1/tokens`)).text();
      const answer = (body: string) => ({ status: 200, headers: { 'content-type': 'application/json' }, body });
      // Three answers that remove three, none and four of five tokens: no two agree.
      sim.script('/api/v1/tokens', [answer(await cutList(sim, 2)), answer(whole), answer(await cutList(sim, 1))]);
      return () => {};
    },
    refused: () => ({ source: 'app', resource: 'tokens', path: '/api/v1/tokens', error: /would lose 3 of 5.*disagree with it and with each other/ }),
    plannedFromStored: true,
  },
  {
    name: 'a root list whose pages disagree on every read',
    async arrange(sim) {
      sim.setPaging({ pageSize: 2, routes: ['app.tokens'], drift: Infinity });
      return () => sim.setPaging({ pageSize: 0, drift: 0 });
    },
    refused: () => ({ source: 'app', resource: 'tokens', path: '/api/v1/tokens', error: /disagree on the list's total.*kept changing while it was read/ }),
    plannedFromStored: true,
  },
];

/** The whole suite on one kind of server. */
export function walkAroundRefusals(start: () => Promise<WarehouseServer>): void {
  const fx = useSimAndWarehouseOn(start, { tokens: TOKENS, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  let baselineRequests = 0;

  const q = <T>(text: ReturnType<typeof sql>) => fx.warehouse.query<T>(text);
  /** `tesync sync --full`, a real process. */
  const cliSync = () =>
    runCli(['sync', '--full'], { DATABASE_URL: fx.databaseUrl, TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, TE_CONCURRENCY: '8' }, { timeoutMs: 120_000 });
  /** The same full walk in this process (the same concurrency); its outcome's status is what the command's exit code is made from. */
  const walk = () => syncOnce(fx.sim, fx.warehouse, createTestLogger([appKey, gatewayKey], 'warn').logger, { appKey, gatewayKey }, ['app', 'gateway'], { full: true });
  const lastRun = async () => (await q<{ id: string; status: string }>(sql`select id::text, status from sync.runs order by started_at desc limit 1`))[0]!;

  beforeAll(async () => {
    const r = await cliSync();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await lastRun()).status).toBe('succeeded');
    baselineRequests = fx.sim.requests.length;
  }, patience(180_000));

  for (const c of CASES) {
    const byCli = c === CASES[0];
    it(`${c.name}: refused alone, the walk goes on, the run ends partial${byCli ? ', `tesync sync --full` exits 0' : ''}`, async () => {
      const undo = await c.arrange(fx.sim);
      fx.sim.resetRequests();
      try {
        if (byCli) {
          const r = await cliSync();
          expect(r.code, r.stdout + r.stderr).toBe(0);
        } else {
          expect((await walk()).status).toBe('partial');
        }
      } finally {
        undo();
      }
      const refused = c.refused(fx.sim);
      const run = await lastRun();
      expect(run.status).toBe('partial');
      expect(await q<{ n: number }>(sql`select count(*)::int as n from sync.runs where status = 'running'`)).toEqual([{ n: 0 }]);
      // Nothing tesync recorded carries the character.
      const dirty = await q<{ n: number }>(sql`select count(*)::int as n from sync.runs where strpos(coalesce(error, '') || stats::text, chr(65533)) > 0`);
      expect(dirty).toEqual([{ n: 0 }]);

      // The refused resource: invalid (or, an item refused alone, partial), saying where and why.
      const [state] = await q<{ status: string; last_run_id: string; last_error: string | null; details: { refused?: string[] } | null }>(
        sql`select status, last_run_id::text, last_error, details from sync.resource_state where source = ${refused.source} and resource = ${refused.resource}`,
      );
      const said = c.itemAlone ? (state!.details?.refused?.[0] ?? '') : (state!.last_error ?? '');
      expect(state).toMatchObject({ status: c.itemAlone ? 'partial' : 'invalid', last_run_id: run.id });
      expect(said).toMatch(refused.error);
      expect(said.length).toBeLessThanOrEqual(600);
      expect(said).not.toMatch(/[\u0000\ud800-\udfff]/);
      if (c.plannedFromStored) expect(state!.last_error).toMatch(/planned from the list of \d{4}-\d\d-\d\dT/);

      // Its body(ies), archived byte for byte: the hashes of what the simulator wrote.
      const served = new Set(fx.sim.requests.filter((x) => x.path.split('?')[0] === refused.path && x.status === 200).map((x) => x.bodySha256));
      const kept = await q<{ sha: string }>(
        sql`select encode(sha256(coalesce(body_bytes, convert_to(body_text, 'UTF8'))), 'hex') as sha from sync.raw_responses where status = ${c.itemAlone ? 'partial' : 'invalid'} and source = ${refused.source} and path like ${`${refused.path}%`} and run_id = ${run.id}::uuid`,
      );
      expect(kept.length).toBeGreaterThan(0);
      for (const k of kept) expect(served.has(k.sha), `archived ${k.sha} was served`).toBe(true);

      // Every other resource was fetched in this run and understood.
      const others = await q<{ source: string; resource: string; status: string; last_run_id: string }>(
        sql`select source, resource, status, last_run_id::text from sync.resource_state where active and not (source = ${refused.source} and resource = ${refused.resource}) order by 1, 2`,
      );
      expect(others.length).toBeGreaterThan(TOKENS * 4);
      for (const o of others) {
        expect(o.last_run_id, `${o.source} ${o.resource} fetched in this run`).toBe(run.id);
        expect(['failed', 'invalid']).not.toContain(o.status);
      }
      // And the warehouse equals the simulator's data (the refused rows as the last good answer left them).
      await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok' });
      await expectGatewayMirror(fx.warehouse, fx.sim.data);

      if (c.plannedFromStored) {
        const walk = fx.sim.requests.length;
        expect(walk).toBeGreaterThan(baselineRequests * 0.8);
        recordFigure(`refused token list: requests (${fx.server.kind}, ${c.name})`, { refusedRun: walk, wholeRun: baselineRequests });
      }
    }, patience(180_000));
  }

  it('a root list whose pages disagree once is read again from its first page and written: succeeded', async () => {
    fx.sim.setPaging({ pageSize: 2, routes: ['app.tokens'], drift: 1 });
    fx.sim.resetRequests();
    try {
      expect((await walk()).status).toBe('succeeded');
    } finally {
      fx.sim.setPaging({ pageSize: 0, drift: 0 });
    }
    const run = await lastRun();
    expect(run.status).toBe('succeeded');
    // Two reads from the first page: the one that drifted, and the whole one written.
    expect(fx.sim.requests.filter((x) => x.path === '/api/v1/tokens')).toHaveLength(2);
    const [state] = await q<{ status: string; last_run_id: string }>(sql`select status, last_run_id::text from sync.resource_state where source = 'app' and resource = 'tokens'`);
    expect(state).toEqual({ status: 'ok', last_run_id: run.id });
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok' });
  }, patience(180_000));

  it('the next sync, with every form gone, is whole again: succeeded, `tesync sync --full` exits 0', async () => {
    const r = await cliSync();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await lastRun()).status).toBe('succeeded');
    const bad = await q<{ n: number }>(sql`select count(*)::int as n from sync.resource_state where active and status in ('invalid', 'failed')`);
    expect(bad).toEqual([{ n: 0 }]);
  }, patience(180_000));
}
