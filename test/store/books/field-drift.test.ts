// Field-level schema drift end to end: simulator → tesync → sync.resource_fields and
// sync.contract_changes (`change = 'fields'`), with one "drift" log line per change.
import { describe, expect, it } from 'vitest';
import { q } from '../../helpers/gateway-mirror.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../../helpers/services.ts';

const gatewayKey = canaryKey('gw');
const testLog = createTestLogger([gatewayKey], 'info');
const driftLines = () => testLog.lines().filter((l) => l.includes('drift'));
const fieldChanges = (tw: TestWarehouse) =>
  q(
    tw.warehouse,
    `select source, kind, array_to_json(added_fields)::text as added, array_to_json(removed_fields)::text as removed, path, sha256 is not null as hashed
     from sync.contract_changes where change = 'fields' order by id`,
  );

describe('field drift', () => {
  const fx = useSimAndWarehouse({ tokens: 4, historyDays: 15, chartsPerToken: 1, gatewayKeys: [gatewayKey] });
  const sync = async (extra: { full?: boolean; tokens?: string[] } = {}) => {
    const run = await fx.sync(testLog.logger, { gatewayKey }, ['app', 'gateway'], extra);
    expect(run.status).toBe('succeeded');
    return run;
  };
  it('the first sync is the baseline: every kind and its fields recorded, no drift', async () => {
    const run = await sync();
    expect(await fieldChanges(fx.tw)).toEqual([]);
    expect(driftLines()).toEqual([]);
    const kinds = await q(fx.warehouse, `select kind, baseline_run_id::text as baseline from sync.resource_kinds order by kind`);
    expect(kinds.map((k) => k.kind)).toEqual(expect.arrayContaining(['app.tokens', 'app.history', 'app.token', 'gateway.screener', 'gateway.token']));
    expect(kinds.every((k) => k.baseline === run.runId)).toBe(true);
    const tokenFields = await q(fx.warehouse, `select field from sync.resource_fields where kind = 'app.tokens' order by field`);
    expect(tokenFields.map((f) => f.field)).toEqual(expect.arrayContaining(['slug', 'coverage', 'coverage.charts', 'freshness']));
    // Keys that are data are not field names: windows, sections, table rows.
    const screener = (await q(fx.warehouse, `select field from sync.resource_fields where kind = 'gateway.screener'`)).map((f) => f.field ?? '');
    expect(screener).toContain('windows');
    expect(screener.filter((f) => f.startsWith('windows.'))).toEqual([]);
    expect(screener).toContain('streams[].key');
  });

  it('a field added to one kind: one contract change naming it, one drift line; a third sync adds nothing', async () => {
    fx.sim.setForms({ addedFields: { 'app.tokens': 'newField' } });
    await sync();
    expect(await fieldChanges(fx.tw)).toEqual([{ source: 'app', kind: 'app.tokens', added: '["newField"]', removed: '[]', path: '/api/v1/tokens', hashed: true }]);
    const lines = driftLines();
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, source: 'app', kind: 'app.tokens', added: ['newField'] });
    expect(lines[0]).not.toContain(new URL(fx.sim.url).host);
    expect(lines[0]).not.toContain(gatewayKey);
    const [field] = await q(fx.warehouse, `select first_run_id <> (select baseline_run_id from sync.resource_kinds where kind = 'app.tokens') as later, removed_at from sync.resource_fields where kind = 'app.tokens' and field = 'newField'`);
    expect(field).toEqual({ later: true, removed_at: null });

    await sync();
    expect(await fieldChanges(fx.tw)).toHaveLength(1);
    expect(driftLines()).toHaveLength(1);
  });

  it('a field missing from two runs in a row is recorded removed once, when the kind is next received', async () => {
    fx.sim.setForms({ addedFields: {} });
    await sync();
    await sync();
    // Missing from one run, then a second: not yet judged.
    expect(await fieldChanges(fx.tw)).toHaveLength(1);
    await sync();
    const changes = await fieldChanges(fx.tw);
    expect(changes.slice(1)).toEqual([{ source: 'app', kind: 'app.tokens', added: '[]', removed: '["newField"]', path: null, hashed: false }]);
    const lines = driftLines();
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 40, source: 'app', kind: 'app.tokens', removed: ['newField'] });
    await sync();
    expect(await fieldChanges(fx.tw)).toHaveLength(2);
    expect(driftLines()).toHaveLength(2);
  });

  it('a removed field that comes back is added again, once', async () => {
    fx.sim.setForms({ addedFields: { 'app.tokens': 'newField' } });
    await sync();
    await sync();
    const changes = await fieldChanges(fx.tw);
    expect(changes).toHaveLength(3);
    expect(changes[2]).toMatchObject({ kind: 'app.tokens', added: '["newField"]', removed: '[]' });
    expect(driftLines()).toHaveLength(3);
    const [field] = await q(fx.warehouse, `select removed_at from sync.resource_fields where kind = 'app.tokens' and field = 'newField'`);
    expect(field).toEqual({ removed_at: null });
  });

  it('a run that received fewer responses of the kind (--token) does not count as an absence', async () => {
    fx.sim.setForms({ addedFields: { 'app.tokens': 'newField', 'app.history': 'extra' } });
    await sync({ full: true });
    expect((await fieldChanges(fx.tw)).slice(3)).toEqual([{ source: 'app', kind: 'app.history', added: '["extra"]', removed: '[]', path: expect.stringContaining('/metrics/history') as unknown, hashed: true }]);
    fx.sim.setForms({ addedFields: { 'app.tokens': 'newField' } });
    const slug = fx.sim.data.appTokens()[0]!.slug;
    // Three runs without the field, each with one token's history of four: no removal.
    for (let i = 0; i < 3; i++) await sync({ full: true, tokens: [slug] });
    expect(await fieldChanges(fx.tw)).toHaveLength(4);
    // A run with every token's history and one more: missing from two runs in a row, one as broad as the last that had it.
    await sync({ full: true });
    expect(await fieldChanges(fx.tw)).toHaveLength(4);
    await sync({ full: true });
    const changes = await fieldChanges(fx.tw);
    expect(changes.slice(4)).toEqual([{ source: 'app', kind: 'app.history', added: '[]', removed: '["extra"]', path: null, hashed: false }]);
    expect(driftLines()).toHaveLength(5);
  });
});
