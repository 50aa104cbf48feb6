import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { refusalMessage, refusalVariable } from '../../../src/cli/upstream-check.ts';
import { simulatorIdentity, upstreamIdentity, type UpstreamIdentity } from '../../../src/store/books/upstream-identity.ts';
import { bindUpstreams, bindingSteps, type BindingRefusal, type SourceFacts } from '../../../src/store/books/upstream-binding.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const A = upstreamIdentity('https://a.example.com');
const B = upstreamIdentity('https://b.example.com:8443/te');
const SIM = simulatorIdentity();
const facts = (f: Partial<SourceFacts> & { configured: UpstreamIdentity }): SourceFacts => ({ source: 'app', bound: undefined, data: 'none', ...f });

describe('bindingSteps', () => {
  it('binds a source with no binding and no data; keeps the same upstream', () => {
    expect(bindingSteps([facts({ configured: A })], false)).toEqual([{ source: 'app', action: 'bind', event: 'bound', to: A }]);
    expect(bindingSteps([facts({ configured: A, bound: A.upstream })], false)).toEqual([{ source: 'app', action: 'keep', upstream: A.upstream }]);
    expect(bindingSteps([facts({ configured: SIM, bound: 'simulator' })], false)).toEqual([{ source: 'app', action: 'keep', upstream: 'simulator' }]);
  });

  it('refuses another upstream, and rebinds it with force', () => {
    expect(bindingSteps([facts({ configured: B, bound: A.upstream, data: 'other' })], false)).toEqual([{ source: 'app', action: 'refuse', bound: A.upstream, configured: B }]);
    expect(bindingSteps([facts({ configured: B, bound: A.upstream, data: 'other' })], true)).toEqual([{ source: 'app', action: 'rebind', from: A.upstream, to: B }]);
    expect(bindingSteps([facts({ configured: SIM, bound: A.upstream, data: 'other' })], false)[0]).toMatchObject({ action: 'refuse', bound: A.upstream });
    expect(bindingSteps([facts({ configured: A, bound: 'simulator', data: 'demo' })], false)[0]).toMatchObject({ action: 'refuse', bound: 'simulator' });
  });

  it('a binding nothing came through (no data of the source) gives way to the configured upstream, without force', () => {
    expect(bindingSteps([facts({ configured: B, bound: A.upstream, data: 'none' })], false)).toEqual([{ source: 'app', action: 'bind', event: 'bound', to: B }]);
    expect(bindingSteps([facts({ configured: SIM, bound: A.upstream, data: 'none' })], false)).toEqual([{ source: 'app', action: 'bind', event: 'bound', to: SIM }]);
  });

  it('decides each source on its own: a new source is bound beside a bound one', () => {
    const steps = bindingSteps([facts({ configured: A, bound: A.upstream }), facts({ source: 'gateway', configured: B })], false);
    expect(steps.map((s) => s.action)).toEqual(['keep', 'bind']);
  });

  it('data of an earlier release: sync adopts it, the demo refuses it', () => {
    expect(bindingSteps([facts({ configured: A, data: 'other' })], false)).toEqual([{ source: 'app', action: 'bind', event: 'adopted', to: A }]);
    expect(bindingSteps([facts({ configured: SIM, data: 'other' })], false)).toEqual([{ source: 'app', action: 'refuse', bound: null, configured: SIM }]);
    expect(bindingSteps([facts({ configured: SIM, data: 'other' })], true)).toEqual([{ source: 'app', action: 'rebind', from: null, to: SIM }]);
  });

  it('data only demos synced is the simulator\'s', () => {
    expect(bindingSteps([facts({ configured: SIM, data: 'demo' })], false)).toEqual([{ source: 'app', action: 'bind', event: 'adopted', to: SIM }]);
    expect(bindingSteps([facts({ configured: A, data: 'demo' })], false)).toEqual([{ source: 'app', action: 'refuse', bound: 'simulator', configured: A }]);
    expect(bindingSteps([facts({ configured: A, data: 'demo' })], true)).toEqual([{ source: 'app', action: 'rebind', from: 'simulator', to: A }]);
  });
});

describe('the refusal', () => {
  const refused: BindingRefusal[] = [
    { source: 'app', action: 'refuse', bound: A.upstream, configured: B },
    { source: 'gateway', action: 'refuse', bound: 'simulator', configured: A },
  ];
  it('names both upstreams of each source and what to do', () => {
    const m = refusalMessage(refused, 'sync', { location: 'Postgres at 127.0.0.1:5432/wh', embedded: false });
    expect(m).toBe(
      'this warehouse (Postgres at 127.0.0.1:5432/wh) mirrors another upstream: app is bound to https://a.example.com, TE_APP_URL is https://b.example.com:8443/te; ' +
        "gateway is bound to tesync demo's bundled simulator, TE_GATEWAY_URL is https://a.example.com. " +
        "Syncing another upstream into it would mix two upstreams' data: point DATABASE_URL at another warehouse, or pass --force to rebind it (recorded in sync.upstream_binding_log).",
    );
    expect(refusalVariable(refused, 'sync', false)).toBe('TE_APP_URL');
  });

  it('for the demo: the warehouse is not the simulator\'s', () => {
    const demo: BindingRefusal[] = [{ source: 'app', action: 'refuse', bound: A.upstream, configured: SIM }, { source: 'gateway', action: 'refuse', bound: null, configured: SIM }];
    const m = refusalMessage(demo, 'demo', { location: 'Postgres at 127.0.0.1:5432/wh', embedded: false });
    expect(m).toContain("mirrors another upstream than tesync demo's bundled simulator: app is bound to https://a.example.com; gateway holds data of an upstream it did not record");
    expect(m).toContain('unset DATABASE_URL');
    expect(m).toContain('--force to rebind it to the simulator');
    expect(refusalVariable(demo, 'demo', false)).toBe('DATABASE_URL');
    expect(refusalMessage(demo, 'demo', { location: '.tesync/postgres', embedded: true })).toContain('set TE_DATA_DIR to another folder');
  });
});

describe('bindUpstreams on Postgres', () => {
  const warehouse = useTestWarehouse();
  beforeEach(async () => {
    await warehouse.query(sql`truncate sync.upstream_bindings, sync.upstream_binding_log, sync.resource_state, sync.runs`);
  });
  const bindings = () => warehouse.query<{ source: string; upstream: string; scheme: string | null; host: string | null; port: number | null; path: string | null; event: string; command: string }>(
    sql`select source, upstream, scheme, host, port, path, event, command from sync.upstream_bindings order by source`,
  );
  const log = () => warehouse.query<{ source: string; event: string; from_upstream: string | null; to_upstream: string; command: string; recent: boolean }>(
    sql`select source, event, from_upstream, to_upstream, command, at > now() - interval '1 minute' as recent from sync.upstream_binding_log order by id`,
  );

  it('binds, keeps, refuses without writing, rebinds with force and logs each change', async () => {
    const db = warehouse.db;
    await bindUpstreams(db, new Map([['app', A]]), { force: false, command: 'sync' });
    expect(await bindings()).toEqual([{ source: 'app', upstream: 'https://a.example.com', scheme: 'https', host: 'a.example.com', port: 443, path: '', event: 'bound', command: 'sync' }]);
    // Upstream A answered: the source holds its data from now on.
    await warehouse.query(sql`insert into sync.resource_state (source, resource, status, last_success_at) values ('app', 'tokens', 'ok', now())`);
    // Gateway configured later: bound beside app.
    const second = await bindUpstreams(db, new Map([['app', A], ['gateway', B]]), { force: false, command: 'worker' });
    expect(second.steps.map((s) => s.action)).toEqual(['keep', 'bind']);
    const refused = await bindUpstreams(db, new Map([['app', B], ['gateway', B]]), { force: false, command: 'sync' });
    expect(refused.refused.map((r) => r.source)).toEqual(['app']);
    expect((await log()).length).toBe(2);
    const forced = await bindUpstreams(db, new Map([['app', SIM]]), { force: true, command: 'demo' });
    expect(forced.steps).toEqual([{ source: 'app', action: 'rebind', from: 'https://a.example.com', to: SIM }]);
    expect((await bindings())[0]).toMatchObject({ upstream: 'simulator', scheme: null, host: null, port: null, path: null, event: 'rebound', command: 'demo' });
    const events = await log();
    expect(events.map(({ recent: _recent, ...e }) => e)).toEqual([
      { source: 'app', event: 'bound', from_upstream: null, to_upstream: 'https://a.example.com', command: 'sync' },
      { source: 'gateway', event: 'bound', from_upstream: null, to_upstream: 'https://b.example.com:8443/te', command: 'worker' },
      { source: 'app', event: 'rebound', from_upstream: 'https://a.example.com', to_upstream: 'simulator', command: 'demo' },
    ]);
    expect(events.every((e) => e.recent)).toBe(true);
  });

  it('a binding nothing came through gives way without force; failures and refusals are no data', async () => {
    const db = warehouse.db;
    await bindUpstreams(db, new Map([['app', A]]), { force: false, command: 'sync' });
    // A's first sync failed: its attempt recorded, no answer archived, nothing fetched.
    await warehouse.query(sql`insert into sync.resource_state (source, resource, status, last_error) values ('app', 'metrics', 'failed', 'connection refused')`);
    await warehouse.query(sql`insert into sync.raw_responses (source, path, fetched_at, last_seen_at, http_status, sha256, body_text, status) values ('app', '/api/v1/metrics', now(), now(), 404, 'x', 'not found', 'invalid') on conflict do nothing`);
    const r = await bindUpstreams(db, new Map([['app', B]]), { force: false, command: 'sync' });
    expect(r.refused).toEqual([]);
    expect(r.steps).toEqual([{ source: 'app', action: 'bind', event: 'bound', to: B }]);
    expect((await bindings())[0]).toMatchObject({ upstream: B.upstream, event: 'bound' });
    expect((await log()).map((e) => e.event)).toEqual(['bound', 'bound']);
  });

  it('a refusal of one source writes nothing for the others', async () => {
    const db = warehouse.db;
    await bindUpstreams(db, new Map([['app', A]]), { force: false, command: 'sync' });
    await warehouse.query(sql`insert into sync.resource_state (source, resource, status, last_success_at) values ('app', 'tokens', 'ok', now())`);
    const r = await bindUpstreams(db, new Map([['app', B], ['gateway', B]]), { force: false, command: 'sync' });
    expect(r.refused).toHaveLength(1);
    expect((await bindings()).map((b) => b.source)).toEqual(['app']);
  });

  it('adopts data an earlier release wrote: demo-only data as the simulator\'s', async () => {
    const db = warehouse.db;
    await warehouse.query(sql`insert into sync.resource_state (source, resource, status, last_success_at) values ('app', 'tokens', 'ok', now()), ('gateway', 'tokens', 'ok', now())`);
    await warehouse.query(sql`insert into sync.runs (id, trigger, sources) values (gen_random_uuid(), 'demo', '{app}'), (gen_random_uuid(), 'cli', '{gateway}')`);
    const demo = await bindUpstreams(db, new Map([['app', SIM], ['gateway', SIM]]), { force: false, command: 'demo' });
    expect(demo.refused).toEqual([{ source: 'gateway', action: 'refuse', bound: null, configured: SIM }]);
    expect(await bindings()).toEqual([]);
    const sync = await bindUpstreams(db, new Map([['app', SIM], ['gateway', A]]), { force: false, command: 'sync' });
    expect(sync.refused).toEqual([]);
    expect((await bindings()).map((b) => [b.source, b.upstream, b.event])).toEqual([
      ['app', 'simulator', 'adopted'],
      ['gateway', 'https://a.example.com', 'adopted'],
    ]);
  });

  it('two processes binding at once: one upstream wins, the other is refused', async () => {
    // Data of an upstream no release recorded: each process would adopt it as its own.
    await warehouse.query(sql`insert into sync.resource_state (source, resource, status, last_success_at) values ('app', 'tokens', 'ok', now())`);
    const others = await Promise.all([1, 2, 3, 4].map(async () => (await import('../../../src/store/connection.ts')).openWarehouse({ databaseUrl: warehouse.databaseUrl, dataDir: '' })));
    try {
      const candidates = [A, B, upstreamIdentity('https://c.example.com'), upstreamIdentity('https://d.example.com')];
      const results = await Promise.all(others.map((w, i) => bindUpstreams(w.db, new Map([['app', candidates[i]!]]), { force: false, command: 'sync' })));
      expect(results.filter((r) => r.refused.length === 0)).toHaveLength(1);
      expect(results.filter((r) => r.refused.length === 1)).toHaveLength(3);
      expect(await bindings()).toHaveLength(1);
      expect(await log()).toHaveLength(1);
    } finally {
      await Promise.all(others.map((w) => w.close()));
    }
  });
});
