// No event lost across a worker killed with SIGKILL between the state change and the delivery
// (issue 59 item 2): a real `tesync worker` (queues in the warehouse) closes a partial walk, its
// close writes the event (the outbox), and the worker starts to POST it to a receiver that never
// answers; it is killed there. The next worker sends it: the event a process had taken is let
// go when its lease passes, and the dead worker is told lost, once. The next worker reads the
// warehouse's clock an hour on (a connection whose server clock reads ahead): the lease and the
// heartbeat age by it, not by this machine's speed.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/lib/notify-signature.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { queueWalk, runEnded } from '../helpers/queue-walk.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { canaryKey, uniqueName, withServerClockOffset } from '../helpers/services.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../helpers/workers.ts';

const appKey = canaryKey('k59app');
const gatewayKey = canaryKey('k59gw');
const SECRET = 'worker-killed-secret-0123456789';
const today = new Date().toISOString().slice(0, 10);

describe('a worker killed between the state change and the delivery', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 593, lastDate: today, freshness: 'fresh', appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  let receiver: Receiver;
  const workers: WorkerProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    receiver = await startReceiver();
    env = {
      DATABASE_URL: fx.databaseUrl,
      TE_QUEUE_PREFIX: uniqueName('tesync_notify'),
      TE_APP_URL: fx.sim.url,
      TE_APP_API_KEY: appKey,
      TE_GATEWAY_URL: fx.sim.url,
      TE_GATEWAY_API_KEY: gatewayKey,
      TE_METRICS_PORT: '0',
      TE_NOTIFY_URL: receiver.url,
      TE_NOTIFY_SECRET: SECRET,
      LOG_LEVEL: 'info',
      ...SCHEDULES_OFF,
    };
  }, patience(60_000));

  afterAll(async () => {
    await killAll(workers);
    await receiver?.close();
  });

  it('the outbox holds the event; the next worker sends it, and tells the dead one lost', async () => {
    const slug = fx.sim.data.appTokens().find((t) => t.coverage.metricHistory)!.slug;
    fx.sim.script(`/api/v1/tokens/${slug}/metrics/history`, [{ status: 422, code: 'unprocessable_history' }]);
    // The first POST is left without an answer: the worker is in the middle of delivering it.
    receiver.script(['hang']);
    const first = startWorker(env);
    workers.push(first);
    await first.ready;
    const { runId } = await queueWalk(env);
    expect((await runEnded(fx.databaseUrl, runId, { nominalMs: 90_000 })).status).toBe('partial');
    await waitFor('the worker to start delivering', () => (receiver.received.length > 0 ? true : undefined), 60_000);
    first.child.kill('SIGKILL');
    await first.exited;

    const [event] = await fx.warehouse.query<{ id: string; type: string; status: string; attempts: number; lease_until: Date | null }>(sql`
      select n.id, n.type, d.status, d.attempts, d.lease_until from sync.notifications n join sync.notification_deliveries d on d.notification_id = n.id
      where n.type = 'custom_run_partial' and n.run_id = ${runId}`);
    // Written with the run's close, taken for delivery, never answered: still pending.
    expect(event).toMatchObject({ type: 'custom_run_partial', status: 'pending', attempts: 0 });
    expect(event!.lease_until).not.toBeNull();
    expect((JSON.parse(receiver.received[0]!.body) as { id: string }).id).toBe(event!.id);

    const next = startWorker({ ...env, DATABASE_URL: withServerClockOffset(fx.databaseUrl, '1 hour') });
    workers.push(next);
    await next.ready;
    const delivered = await waitFor(
      'the next worker to deliver it',
      async () => {
        const [d] = await fx.warehouse.query<{ status: string }>(sql`select status from sync.notification_deliveries where notification_id = ${event!.id}`);
        return d?.status === 'delivered' ? d : undefined;
      },
      60_000,
    );
    expect(delivered.status).toBe('delivered');
    const accepted = receiver.received.filter((r) => r.answered === 200).map((r) => JSON.parse(r.body) as { id: string; type: string; figures: Record<string, unknown> });
    expect(accepted.filter((p) => p.id === event!.id)).toHaveLength(1);
    for (const r of receiver.received) expect(verifySignature(SECRET, String(r.headers['x-tesync-signature']), r.body, Math.floor(Date.now() / 1000))).toBe(true);

    // The killed worker, not seen since, is told lost, once.
    const lost = await waitFor(
      'the killed worker to be told lost',
      async () => {
        const rows = await fx.warehouse.query<{ id: string; figures: Record<string, unknown> }>(sql`select id, figures from sync.notifications where type = 'custom_worker_lost'`);
        return rows.length > 0 ? rows : undefined;
      },
      60_000,
    );
    expect(lost).toHaveLength(1);
    expect(lost[0]!.figures).toMatchObject({ pid: first.pid });
    for (const r of receiver.received) for (const s of [appKey, gatewayKey, SECRET]) expect(JSON.stringify(r)).not.toContain(s);
  });
});
