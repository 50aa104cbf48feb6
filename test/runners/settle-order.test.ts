// One order of a job's end in both runners (issue 57): the same walk of the same simulator,
// once by the in-process runner (`tesync sync`'s performSync) and once by the BullMQ worker
// (its runtime started in this process, on each queue backend, the walk queued as `tesync
// enqueue` does), each into a warehouse of its own. The run driver says at debug level each
// job planned, each job's follow-ups planned and each job settled (src/engine/run/run-driver.ts);
// from those lines, every job goes through the same events in the same order under both
// runners (planned; its follow-ups planned; settled), the two walks plan and settle the same
// jobs, and in each the run is settled (nothing pending) only at its last job's end: never
// between a job and its children.
import { beforeAll, describe, expect, it } from 'vitest';
import { configuredSources, settingsFrom } from '../../src/cli/sync-session.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { catalog, groups, walkRoots } from '../../src/resources/index.ts';
import { encodeResource } from '../../src/runners/bullmq/ids.ts';
import { startWorkerRuntime } from '../../src/runners/bullmq/runtime.ts';
import { patience } from '../helpers/patience.ts';
import { backendEnv, QUEUE_BACKENDS, removeQueueState, type QueueBackendKind, type QueuePlace } from '../helpers/queue-backends.ts';
import { queueWalk, runEnded } from '../helpers/queue-walk.ts';
import { freshWarehouse, useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { commandEnv } from '../helpers/sync.ts';
import { SCHEDULES_OFF } from '../helpers/workers.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
const DATA = { tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 57, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' as const } }, gatewayKeys: [gwKey] };

interface DriverLine {
  msg: string;
  runId: string;
  jobId: string;
  resource?: string;
  state?: string;
  requests?: number;
  counted?: boolean;
  pending?: number;
}

/** What the run driver said of one run, in the order it said it. */
function driverLines(lines: readonly string[], runId: string): DriverLine[] {
  return lines
    .map((l) => JSON.parse(l) as DriverLine)
    .filter((l) => l.runId === runId && ['job planned', 'follow-ups planned', 'job settled'].includes(l.msg));
}

/**
 * Each job's events, by its resource (`source.resource`, whatever its id in the runner): its
 * first plan, its follow-ups planned (how many requests), its end counted. A plan of a job
 * planned already and a settle that counted nothing are left out: which request comes first
 * when two lists name one job, or which attempt counts a job run twice, is the runner's timing.
 */
function eventsByJob(said: readonly DriverLine[]): Map<string, string[]> {
  const resourceOf = new Map<string, string>();
  const out = new Map<string, string[]>();
  for (const l of said) {
    if (l.msg === 'job planned') {
      if (l.state !== 'new') continue;
      const [source, ...rest] = l.resource!.split('/');
      resourceOf.set(l.jobId, `${source}.${encodeResource(rest.join('/'))}`);
    }
    const job = resourceOf.get(l.jobId);
    expect(job, `${l.msg} of ${l.jobId} before it was planned`).toBeDefined();
    if (l.msg === 'job settled' && !l.counted) continue;
    const event = l.msg === 'job planned' ? 'planned' : l.msg === 'follow-ups planned' ? `follow-ups planned (${l.requests})` : 'settled';
    out.set(job!, [...(out.get(job!) ?? []), event]);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The pending counts of each settle that counted a job, in order: only the last is 0. */
function pendingAtSettles(said: readonly DriverLine[]): number[] {
  return said.filter((l) => l.msg === 'job settled' && l.counted).map((l) => l.pending!);
}

describe('one order of settle and plan in both runners', () => {
  // The simulator both runners walk, and the warehouse of the in-process walk.
  const fx = useSimAndWarehouse(DATA);
  let redisUrl: string;
  let inProcess: { said: DriverLine[]; status: string };

  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    const log = createTestLogger([appKey, gwKey], 'debug');
    const run = await fx.sync(log.logger, { appKey, gatewayKey: gwKey }, ['app', 'gateway']);
    inProcess = { said: driverLines(log.lines(), run.runId), status: run.status };
  });

  it('the in-process walk: every job planned, its follow-ups, then its end; settled only at its last job', () => {
    expect(inProcess.status).toBe('succeeded');
    const byJob = eventsByJob(inProcess.said);
    // The walk reached the lists and what they list: the two sources' lists and each token's jobs.
    expect(byJob.size).toBeGreaterThan(3 * DATA.tokens);
    for (const [job, events] of byJob) expect(events, job).toEqual(events.length === 2 ? ['planned', 'settled'] : ['planned', expect.stringMatching(/^follow-ups planned \(\d+\)$/), 'settled']);
    expect([...byJob.values()].some((e) => e.length === 3)).toBe(true);
    const pending = pendingAtSettles(inProcess.said);
    expect(pending.at(-1)).toBe(0);
    expect(pending.slice(0, -1).every((n) => n > 0)).toBe(true);
  });

  it.each(QUEUE_BACKENDS)('the worker (%s queues) walks the same jobs through the same events in the same order', async (backend: QueueBackendKind) => {
    const tw = await freshWarehouse();
    const place: QueuePlace = { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix: uniqueName('tesync_order') };
    const env = {
      ...commandEnv(fx.sim, { appKey, gatewayKey: gwKey }, tw.databaseUrl),
      ...backendEnv(place),
      TE_QUEUE_PREFIX: place.prefix,
      TE_METRICS_PORT: '0',
      TE_STATUS_PAGE: 'off',
      TE_REQUEST_TIMEOUT_MS: '5000',
      ...SCHEDULES_OFF,
    };
    const config = loadConfig(env);
    const log = createTestLogger([appKey, gwKey], 'debug');
    const plan = { catalog, walkRoots, groups: groups(), sources: configuredSources(config), settings: (full: boolean) => settingsFrom(config, full) };
    const runtime = await startWorkerRuntime({ config, logger: log.logger, warehouse: tw.warehouse, plan });
    let said: DriverLine[];
    try {
      const { runId } = await queueWalk(env);
      const end = await runEnded(tw.databaseUrl, runId, { nominalMs: 60_000 });
      expect(end.status).toBe('succeeded');
      said = driverLines(log.lines(), runId);
    } finally {
      await runtime.close();
      await removeQueueState(place);
    }
    expect(eventsByJob(said)).toEqual(eventsByJob(inProcess.said));
    const pending = pendingAtSettles(said);
    expect(pending.at(-1)).toBe(0);
    expect(pending.slice(0, -1).every((n) => n > 0)).toBe(true);
  }, patience(120_000));
});
