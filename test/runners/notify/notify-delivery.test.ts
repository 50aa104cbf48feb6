// Notifications delivered (issue 59 item 2) to a real HTTP receiver of the test's own that
// answers 500, then nothing (a timeout), then 429 with a Retry-After longer than the backoff,
// then 200: each event is accepted once, in order, every delivery signed so the receiver's
// check passes, every attempt recorded, the Retry-After honoured (nothing is sent before it
// ends), and no key or password is in any body. The events are a real sync's: a partial walk
// of the simulator, then a complete one (its recovery), with keys configured and a password
// in DATABASE_URL. Time is the warehouse's clock moved an hour per round (a connection whose
// server clock reads ahead), never this machine's speed; the timeout is a hang guard.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../../src/lib/notify-signature.ts';
import { deliverPending, endpointLabel } from '../../../src/runners/notify/deliver.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { patience } from '../../helpers/patience.ts';
import { startReceiver, type Receiver } from '../../helpers/receiver.ts';
import { canaryKey, createTestLogger, withServerClockOffset } from '../../helpers/services.ts';

const appKey = canaryKey('n59app');
const gatewayKey = canaryKey('n59gw');
const SECRET = 'notify-secret-of-the-test-0123456789';
const PASSWORD = 'never-in-a-notification-0xfeed';
const today = new Date().toISOString().slice(0, 10);

describe('delivery to a receiver that answers 500, then nothing, then 429 with Retry-After, then 200', () => {
  const log = createTestLogger();
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 591, lastDate: today, freshness: 'fresh', appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  let receiver: Receiver;
  const opened: Warehouse[] = [];
  const secrets = () => [appKey, gatewayKey, PASSWORD, SECRET];
  /** The warehouse as a deliverer `hours` later sees it. */
  const later = async (hours: number) => {
    const w = await openWarehouse({ databaseUrl: withServerClockOffset(fx.databaseUrl, `${hours} hours`), dataDir: '', maxConnections: 2 });
    opened.push(w);
    return w;
  };
  const round = async (hours: number) =>
    deliverPending({ warehouse: await later(hours), urls: [receiver.url], secret: SECRET, warehouseName: 'test warehouse', secrets: secrets(), logger: log.logger, timeoutMs: patience(1_000) });
  let ids: string[];

  beforeAll(async () => {
    receiver = await startReceiver();
    const slug = fx.sim.data.appTokens().find((t) => t.coverage.metricHistory)!.slug;
    fx.sim.script(`/api/v1/tokens/${slug}/metrics/history`, [{ status: 422, code: 'unprocessable_history' }]);
    const url = new URL(fx.databaseUrl);
    url.password = PASSWORD;
    const env = { TE_NOTIFY_URL: receiver.url, TE_NOTIFY_SECRET: SECRET, DATABASE_URL: url.toString() };
    expect((await fx.sync(log.logger, { appKey, gatewayKey, env }, ['app', 'gateway'])).status).toBe('partial');
    expect((await fx.sync(log.logger, { appKey, gatewayKey, env }, ['app', 'gateway'])).status).toBe('succeeded');
    ids = (await fx.warehouse.query<{ id: string }>(sql`select id from sync.notifications order by seq`)).map((r) => r.id);
  }, patience(120_000));

  afterAll(async () => {
    for (const w of opened) await w.close();
    await receiver?.close();
  });

  it('tries again on its schedule, honours Retry-After, and then delivers each event once, in order, signed', async () => {
    const types = (await fx.warehouse.query<{ type: string }>(sql`select type from sync.notifications order by seq`)).map((r) => r.type);
    // The partial walk (a token's history refused: never confirmed, so overdue, and its coverage
    // short), then its recovery: each told once.
    expect(types).toEqual(['custom_run_partial', 'custom_group_overdue', 'custom_coverage_below', 'custom_run_recovered', 'custom_group_on_time', 'custom_coverage_restored']);
    receiver.script([{ status: 500 }, 'hang', { status: 429, retryAfter: String(2 * 3600) }]);

    expect(await round(0)).toEqual({ delivered: 0, failed: 1, dead: 0 });
    expect(await round(1)).toEqual({ delivered: 0, failed: 1, dead: 0 });
    expect(await round(2)).toEqual({ delivered: 0, failed: 1, dead: 0 });
    // The 429 said two hours, longer than the 15 minutes its backoff would wait: an hour on, nothing goes out.
    expect(await round(3)).toEqual({ delivered: 0, failed: 0, dead: 0 });
    expect(receiver.received).toHaveLength(3);
    expect(await round(4.1)).toEqual({ delivered: ids.length, failed: 0, dead: 0 });

    const got = receiver.received.map((r) => JSON.parse(r.body) as { id: string; type: string; text: string; occurred_at: string; warehouse: string });
    // The first event four times (500, no answer, 429, 200), then each other once: in order.
    expect(got.map((p) => p.id)).toEqual([ids[0], ids[0], ids[0], ...ids]);
    expect(receiver.received.map((r) => r.answered)).toEqual([500, 0, 429, ...ids.map(() => 200)]);
    const accepted = receiver.received.filter((r) => r.answered === 200).map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(accepted).toEqual(ids);
    // Each delivery signed: the receiver's check passes on the body as received.
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (const r of receiver.received) {
      expect(verifySignature(SECRET, String(r.headers['x-tesync-signature']), r.body, nowSeconds)).toBe(true);
      expect(verifySignature('another secret of 16+ chars', String(r.headers['x-tesync-signature']), r.body, nowSeconds)).toBe(false);
      expect(verifySignature(SECRET, String(r.headers['x-tesync-signature']), `${r.body} `, nowSeconds)).toBe(false);
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(got[0]).toMatchObject({ type: 'custom_run_partial', warehouse: 'test warehouse', text: expect.stringMatching(/^tesync \(test warehouse\): run partial: app\+gateway .*first failures: token\/[^/]+\/history \(failed ProblemError 422 unprocessable_history\)/) });
    // No key, no password, no notification secret, in any body or header.
    for (const r of receiver.received) for (const s of secrets()) expect(JSON.stringify(r), s).not.toContain(s);

    // Every attempt recorded, under the endpoint's label (never its URL).
    const [d] = await fx.warehouse.query<{ endpoint: string; status: string; attempts: number; log: { httpStatus: number | null; error: string | null; retryAfterMs: number | null }[] }>(
      sql`select endpoint, status, attempts, log from sync.notification_deliveries where notification_id = ${ids[0]!}`,
    );
    expect(d).toMatchObject({ endpoint: endpointLabel(receiver.url), status: 'delivered', attempts: 4 });
    expect(d!.endpoint).not.toContain('secret-token');
    expect(d!.log.map((a) => [a.httpStatus, a.retryAfterMs])).toEqual([
      [500, null],
      [null, null],
      [429, 7_200_000],
      [200, null],
    ]);
    expect(d!.log[1]!.error).toMatch(/^no answer within \d+ ms$/);
    const [n] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.notification_deliveries where status <> 'delivered'`);
    expect(n!.n).toBe(0);
  });
});
