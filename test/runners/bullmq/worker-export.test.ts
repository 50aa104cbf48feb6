// The worker's `export` schedule (issue 46 item 3): with TE_EXPORT_DIR set, a real `tesync
// worker` registers it, and `tesync enqueue --schedule export --wait` has it write the daily
// archives as Parquet with their `_manifest.json`, recorded in sync.runs like any run, without
// a request upstream; a second export with nothing new rewrites no partition and is a run of
// its own. Without TE_EXPORT_DIR the schedule is not registered. On both queue backends.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportSummary } from '../../../src/export/export.ts';
import type { Manifest } from '../../../src/export/manifest.ts';
import { DAILY_ARCHIVE_NAMES } from '../../../src/schema/warehouse/history.ts';
import { runCli } from '../../helpers/cli.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { patience } from '../../helpers/patience.ts';
import { jobSchedulers, QUEUE_BACKENDS, removeQueueState, workerEnvFor, type QueuePlace } from '../../helpers/queue-backends.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');

let redisUrl: string;
beforeAll(async () => {
  redisUrl = await redisServerUrl();
});

interface ExportRun {
  id: string;
  trigger: string;
  status: string;
  sources: string[];
  stats: ExportSummary;
  error: string | null;
}

describe.each(QUEUE_BACKENDS)('the export schedule, queues on %s', (backend) => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  const places: QueuePlace[] = [];
  const workers: WorkerProcess[] = [];
  const dirs: string[] = [];

  // Before the fixture's teardown: no worker is left writing to the warehouse it drops.
  afterAll(async () => {
    await killAll(workers);
    for (const p of places) await removeQueueState(p);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const envFor = (place: QueuePlace, extra: Record<string, string>) =>
    workerEnvFor(place, fx.sim.url, { TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, LOG_LEVEL: 'info', ...SCHEDULES_OFF, ...extra });

  const exportRuns = (place: QueuePlace) =>
    fx.warehouse.query<ExportRun>(
      sql`select id::text, trigger, status, sources, stats, error from sync.runs
          where options->>'schedule' = 'export' and options->>'queuePrefix' = ${place.prefix} order by started_at`,
    );

  /** Each file the manifest lists: its sha256 and mtime as found on disk. */
  function onDisk(dir: string, m: Manifest): Map<string, { sha256: string; mtimeMs: number }> {
    return new Map(m.files.map((f) => [f.path, { sha256: createHash('sha256').update(readFileSync(path.join(dir, f.path))).digest('hex'), mtimeMs: statSync(path.join(dir, f.path)).mtimeMs }]));
  }

  it('exports the daily archives on `tesync enqueue --schedule export`, a run each time, the second rewriting nothing', async () => {
    const synced = await fx.sync(log.logger, { appKey, gatewayKey }, ['app', 'gateway']);
    expect(synced.status).toBe('succeeded');
    const days: Record<string, string[]> = {};
    for (const t of DAILY_ARCHIVE_NAMES) {
      days[t] = (await fx.warehouse.query<{ day: string }>(sql.raw(`select distinct snapshot_date::text as day from ${t} order by 1`))).map((r) => r.day);
      expect(days[t]!.length, t).toBeGreaterThan(0);
    }

    const place: QueuePlace = { backend, redisUrl, databaseUrl: fx.databaseUrl, prefix: uniqueName('tesync_export') };
    places.push(place);
    const dir = mkdtempSync(path.join(tmpdir(), 'tesync-worker-export-'));
    dirs.push(dir);
    // A pattern that cannot come due during the test: the runs are the ones asked for.
    const env = envFor(place, { TE_EXPORT_DIR: dir, TE_SCHEDULE_EXPORT: '15 0 1 1 *' });
    const worker = startWorker(env);
    workers.push(worker);
    await worker.ready;
    expect(await jobSchedulers(place)).toEqual([{ id: 'export', pattern: '15 0 1 1 *' }]);
    fx.sim.resetRequests();

    const exportNow = async () => {
      const r = await runCli(['enqueue', '--schedule', 'export', '--wait', '--timeout', String(patience(90)), '--json'], env, { timeoutMs: 100_000 });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { runId: string; status: string; export: ExportSummary };
    };

    const first = await exportNow();
    expect(first.status).toBe('succeeded');
    const manifest = JSON.parse(readFileSync(path.join(dir, '_manifest.json'), 'utf8')) as Manifest;
    expect(Object.keys(manifest.tables).sort()).toEqual([...DAILY_ARCHIVE_NAMES].sort());
    for (const t of DAILY_ARCHIVE_NAMES) {
      const files = manifest.files.filter((f) => f.table === t);
      expect([...new Set(files.map((f) => f.partition))].sort(), t).toEqual(days[t]);
      for (const f of files) expect(f.path.startsWith(`${t}/snapshot_date=${f.partition}/`), f.path).toBe(true);
    }
    const written = onDisk(dir, manifest);
    for (const f of manifest.files) expect(written.get(f.path)!.sha256, f.path).toBe(f.sha256);

    let runs = await exportRuns(place);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run).toMatchObject({ id: first.runId, trigger: 'manual', status: 'succeeded', sources: [], error: null });
    expect(run.stats.dir).toBe(dir);
    expect(run.stats.tables.map((t) => t.table).sort()).toEqual([...DAILY_ARCHIVE_NAMES].sort());
    for (const t of run.stats.tables) {
      const [{ n }] = (await fx.warehouse.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${t.table}`))) as [{ n: number }];
      expect(t, t.table).toMatchObject({ files: days[t.table]!.length, rows: n, removed: 0, unchanged: 0 });
    }
    expect(first.export).toEqual(run.stats);

    // Nothing new: every partition left as written, its bytes and its mtime; a second run.
    const second = await exportNow();
    expect(second.status).toBe('succeeded');
    const again = JSON.parse(readFileSync(path.join(dir, '_manifest.json'), 'utf8')) as Manifest;
    expect(again.files).toEqual(manifest.files);
    expect(onDisk(dir, again)).toEqual(written);
    runs = await exportRuns(place);
    expect(runs.map((r) => r.id)).toEqual([first.runId, second.runId]);
    expect(runs[1]!.status).toBe('succeeded');
    for (const t of runs[1]!.stats.tables) expect(t, t.table).toMatchObject({ files: 0, rows: 0, removed: 0, unchanged: days[t.table]!.length });

    // Not one request upstream.
    expect(fx.sim.requests).toEqual([]);
    expect(worker.lines().filter((l) => l.level >= 50)).toEqual([]);

    // Without TE_EXPORT_DIR the schedule goes, as one switched off does.
    const bare = startWorker(envFor(place, { TE_SCHEDULE_EXPORT: '15 0 1 1 *' }));
    workers.push(bare);
    await bare.ready;
    await waitFor('the export scheduler removed', async () => ((await jobSchedulers(place)).length === 0 ? true : undefined), 10_000);
  }, patience(120_000));
});
