// `tesync replay` (src/replay/) on a warehouse synced three times across the simulator's epochs
// (a delisting, then a revision of past values fetched whole), as test/store/read/changes.test.ts
// syncs it: written again from its archive alone, it equals itself (`--check`, exit 0); a row
// changed by hand with psql is named, with its key and column (exit 1). And a body a reader once
// refused, for a form it did not understand yet, becomes rows when the reader that understands
// it replays the archive (`--into`), known from the instant the body was received.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { refused, type JobDefinition } from '../../src/engine/kit/types.ts';
import { catalog } from '../../src/resources/index.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { requireBinary } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { useSimAndWarehouse, useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const run = promisify(execFile);
const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const { logger } = createTestLogger([appKey, gatewayKey], 'warn');
const keys = { appKey, gatewayKey };

/** No line of a person's output is wider than a terminal of 80 columns. */
const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('tesync replay on a warehouse synced across a delisting and a revision', () => {
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

  beforeAll(async () => {
    for (const epoch of [0, 1, 2]) {
      fx.sim.setEpoch(epoch);
      const r = await syncOnce(fx.sim, fx.warehouse, logger, keys, ['app', 'gateway'], epoch === 2 ? { full: true } : {});
      expect(r.status, `sync at epoch ${epoch}`).toBe('succeeded');
    }
  }, patience(240_000));

  it('--check: the replay equals the warehouse, every write repeated, nothing left out; its scratch database dropped', async () => {
    const r = await runCli(['replay', '--check', '--json'], { DATABASE_URL: fx.databaseUrl }, { timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.code, r.stdout).toBe(0);
    const out = JSON.parse(r.stdout) as { into: { scratch: string }; replay: { writes: { read: number }; runEnds: number; unreplayable: Record<string, unknown> }; comparison: { equal: boolean; tables: number } };
    expect(out.comparison).toMatchObject({ equal: true });
    expect(out.comparison.tables).toBeGreaterThan(40);
    expect(out.replay.runEnds).toBe(3);
    expect(out.replay.writes.read).toBeGreaterThan(50);
    expect(out.replay.unreplayable).toMatchObject({ bodiesUnrecorded: 0, recordsMissingBodies: 0, unknownJobs: 0, gaps: 0, notWritten: 0 });
    expect(out.into.scratch).toMatch(/^tesync_replay_check_/);
    const [left] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from pg_database where datname = ${out.into.scratch}`);
    expect(left!.n).toBe(0);
  }, patience(180_000));

  it('a row updated by hand with psql: exit 1, naming the table, the key and the column, within 80 columns', async () => {
    const psql = requireBinary('psql', 'apt-get install postgresql-client');
    const [token] = await fx.warehouse.query<{ slug: string }>(sql`select slug from app.tokens where delisted_at is null order by slug limit 1`);
    await run(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', fx.databaseUrl, '-c', `update app.tokens set display_name = 'Edited By Hand' where slug = '${token!.slug}'`]);
    const r = await runCli(['replay', '--check'], { DATABASE_URL: fx.databaseUrl }, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(widest(r.stdout)).toBeLessThanOrEqual(80);
    // Under the table's line, its key and the column changed (what it holds before when it was written).
    const lines = r.stdout.split('\n');
    const table = lines.findIndex((l) => l === 'app.tokens: 1 changed');
    expect(table, r.stdout).toBeGreaterThan(-1);
    expect(lines.slice(table).find((l) => l.endsWith(` slug=${token!.slug}`))).toMatch(/^ {2}changed: display_name, fetched_at +slug=/);
    // The edit closed a version of its own: the history differs too. Not T_as_of at any run's
    // end: the edit came after the last.
    expect(r.stdout).toMatch(new RegExp(`app\\.tokens_history: 1 missing from the replay\\n.*\\n.*\\n {2}missing from the replay +slug=${token!.slug}, known_from=`));
    expect(r.stdout).not.toContain('T_as_of differs');
  }, patience(180_000));
});

describe('tesync replay after a reader learns a form it refused', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 0, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  // An empty database the replay writes into.
  const into = useTestDatabase();

  it('--into: the body refused then is read by the reader that understands it, its rows known from its receipt', async () => {
    // The reader switched off for one token (the first it reads): a form it does not know yet.
    const snapshot = catalog.get('app.snapshot') as JobDefinition<{ slug: string }>;
    let off: string | undefined;
    const unaware: JobDefinition<{ slug: string }> = {
      ...snapshot,
      reader: {
        ...snapshot.reader,
        read: (input, got) => {
          off ??= input.payload.slug;
          return input.payload.slug === off ? refused('a snapshot form this reader does not know yet') : snapshot.reader.read(input, got);
        },
      },
    };
    const r = await syncOnce(fx.sim, fx.warehouse, logger, keys, ['app'], { catalog: new Map([...catalog, ['app.snapshot', unaware as JobDefinition<any>]]) });
    expect(r.status).toBe('partial');
    const [kept] = await fx.warehouse.query<{ id: string; fetched_at: string; path: string }>(
      sql`select r.id::text as id, r.fetched_at::text as fetched_at, r.path from sync.writes w join sync.raw_responses r on r.id = any (w.bodies) where w.how = 'refused' and w.job = 'app.snapshot'`,
    );
    expect(kept?.path).toContain(`/tokens/${off!}`);
    const [before] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.token_snapshots where token_slug = ${off!}`);
    expect(before!.n).toBe(0);

    const replay = await runCli(['replay', '--into', into.databaseUrl], { DATABASE_URL: fx.databaseUrl }, { timeoutMs: 120_000 });
    expect(replay.code, replay.stderr).toBe(0);
    expect(widest(replay.stdout)).toBeLessThanOrEqual(80);
    expect(replay.stdout).toMatch(/1 understood now and written/);
    const w = await openWarehouse({ databaseUrl: into.databaseUrl, dataDir: '', maxConnections: 2 });
    try {
      const [row] = await w.query<{ fetched_at: string; raw_response_id: string }>(
        sql`select fetched_at::text as fetched_at, raw_response_id::text as raw_response_id from app.token_snapshots where token_slug = ${off!}`,
      );
      expect(row).toEqual({ fetched_at: kept!.fetched_at, raw_response_id: kept!.id });
      // Every other token's snapshot as the sync wrote it.
      const others = await fx.warehouse.query<{ s: string }>(sql`select token_slug || ' ' || fetched_at::text as s from app.token_snapshots order by 1`);
      const replayed = await w.query<{ s: string }>(sql`select token_slug || ' ' || fetched_at::text as s from app.token_snapshots where token_slug <> ${off!} order by 1`);
      expect(replayed).toEqual(others);
    } finally {
      await w.close();
    }
  }, patience(240_000));
});
