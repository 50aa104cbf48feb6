// The in-process runner's lanes: jobs held back by one bucket's budget never take the
// slots of another bucket's jobs.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineJob, type JobContext, type JobDefinition } from '../../src/engine/kit/types.ts';
import type { RouteName } from '../../src/upstream/routes.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { emptyPendingWork, runWalk } from '../../src/runners/in-process.ts';
import { patience } from '../helpers/patience.ts';
import { useTestWarehouse } from '../helpers/mirror-fixture.ts';

const logger = createLogger({ level: 'silent', secrets: [] });
const POLL = { timeout: patience(5_000) };

describe('runWalk', () => {
  // The job lifecycle keeps each resource's state in a real warehouse.
  const w = useTestWarehouse();

  it('runs the jobs of other buckets while every slot of one bucket waits for its budget', async () => {
    let release!: () => void;
    const budgetBack = new Promise<void>((r) => (release = r));
    // Gateway requests wait as a bucket out of budget makes them wait; app requests are answered at once.
    const upstream = {
      async get(req: { route: RouteName }) {
        if (req.route.startsWith('gateway.')) await budgetBack;
        return { status: 200, notModified: false, path: `/${req.route}`, headers: {}, body: { data: {}, meta: {} }, text: '{"data":{},"meta":{}}', sha256: '' };
      },
    };
    const context = { logger, now: () => new Date(), runId: randomUUID(), warehouse: w, upstream, settings: { full: false, markerMaxAgeMs: 0, batchSize: 2000 } } as unknown as JobContext;
    const order: string[] = [];
    type Item = { job: string; n: number };
    const job = (name: string, source: 'app' | 'gateway', route: RouteName): JobDefinition<{ n: number }> =>
      defineJob({
      name,
      source,
      group: 'x',
      route,
      plannedBy: 'gateway.tokens',
      each: (i: Item) => (i.job === name ? [{ n: i.n }] : []),
      payload: z.object({ n: z.number() }),
      resource: (p) => `${name}/${p.n}`,
      reader: {
        asks: () => [{ route }],
        read: ({ payload: p }) => {
          order.push(`${name}/${p.n}`);
          return { status: 'ok' };
        },
      },
      });
    const gateway = job('gateway.page', 'gateway', 'gateway.token');
    const app = job('app.snapshot', 'app', 'app.token');
    const bundle = job('app.bundle', 'app', 'app.bundle');
    const planner: JobDefinition<Record<string, never>> = defineJob({
      name: 'gateway.tokens',
      source: 'gateway',
      group: 'tokens',
      route: 'gateway.tokens',
      payload: z.object({}),
      resource: () => 'tokens',
      reader: {
        asks: () => [],
        read: () => ({
        status: 'ok',
        // The waiting jobs are planned first, as a catalog of one source can be.
        listed: {
          items: [
            ...[1, 2, 3, 4].map((n): Item => ({ job: gateway.name, n })),
            ...[1, 2, 3].map((n): Item => ({ job: app.name, n })),
            ...[1, 2].map((n): Item => ({ job: bundle.name, n })),
          ],
        },
      }),
      },
    });
    const catalog = new Map<string, JobDefinition<any>>([planner, gateway, app, bundle].map((j) => [j.name, j]));
    const pending = emptyPendingWork();
    const walk = runWalk({ catalog, roots: [{ name: 'gateway.tokens', payload: {} }], context, concurrency: 2, pending });
    // expect.poll gives up after a second unless told: a hang guard, scaled like every other.
    await expect.poll(() => order.filter((o) => o.startsWith('app.')).length, POLL).toBe(5);
    expect(order.some((o) => o.startsWith('gateway.page'))).toBe(false);
    // The work left, as progress reads it for its ETA: the gateway's 4, 2 of them running; the
    // token list that planned them is done, so nothing more is coming. (An app job has pushed
    // its name a moment before the runner has recorded it and counted it done.)
    // The same holds for the bundle job in the app-key bucket: wait until both are counted.
    await expect
      .poll(() => structuredClone(pending), POLL)
      .toEqual({
        byBucket: { gateway: { queued: 2, active: 2 }, 'app-public': { queued: 0, active: 0 }, 'app-key': { queued: 0, active: 0 } },
        planners: 0,
        // Per kind, for the ETA: the token list settled, having planned nine; 2 + 2 gateway pages
        // pending; the app and bundle jobs settled (their time: whatever it was).
        kinds: {
          'gateway.tokens': { planner: true, pending: 0, settled: 1, ms: expect.any(Number), planned: 9 },
          'gateway.page': { planner: false, pending: 4, settled: 0, ms: 0, planned: 0 },
          'app.snapshot': { planner: false, pending: 0, settled: 3, ms: expect.any(Number), planned: 0 },
          'app.bundle': { planner: false, pending: 0, settled: 2, ms: expect.any(Number), planned: 0 },
        },
        concurrency: 2,
      });
    release();
    const stats = await walk;
    expect(stats).toMatchObject({ planned: 10, done: 10, failed: 0, cancelled: 0 });
    expect(pending.byBucket.gateway).toEqual({ queued: 0, active: 0 });
  });
});
