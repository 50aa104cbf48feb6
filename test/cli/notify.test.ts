// `tesync notify --test` (issue 59 item 2), run as the real CLI against a receiver of the test's
// own: it sends one signed test event to each endpoint and says what each answered, never the
// URL; a refusing endpoint is exit 1, no TE_NOTIFY_URL exit 2; the outbox is left as it was.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/lib/notify-signature.ts';
import { endpointLabel } from '../../src/runners/notify/deliver.ts';
import { runCli } from '../helpers/cli.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { useTestWarehouse } from '../helpers/mirror-fixture.ts';

const SECRET = 'notify-test-secret-0123456789abcdef';

describe('tesync notify --test', () => {
  const w = useTestWarehouse();
  let ok: Receiver;
  let refusing: Receiver;
  beforeAll(async () => {
    [ok, refusing] = await Promise.all([startReceiver(), startReceiver('/hooks/another-secret-path-xyz')]);
  });
  afterAll(async () => {
    await Promise.all([ok?.close(), refusing?.close()]);
  });

  it('sends a signed test event to each endpoint and says what each answered, naming it by its host and a hash', async () => {
    refusing.script([{ status: 500 }]);
    const r = await runCli(['notify', '--test'], { DATABASE_URL: w.databaseUrl, TE_NOTIFY_URL: `${ok.url},${refusing.url}`, TE_NOTIFY_SECRET: SECRET, LOG_LEVEL: 'warn' });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^Test event [0-9a-f-]{36}, signed with TE_NOTIFY_SECRET:$/m);
    expect(r.stdout).toContain(`  ${endpointLabel(ok.url)}: answered 200 in `);
    expect(r.stdout).toContain(`  ${endpointLabel(refusing.url)}: answered 500 in `);
    for (const url of [ok.url, refusing.url]) expect(r.stdout + r.stderr).not.toContain(new URL(url).pathname);
    const [got] = ok.received;
    const body = JSON.parse(got!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['version', 'type', 'id', 'occurred_at', 'warehouse', 'source', 'group', 'run_id', 'subject', 'figures', 'text']);
    expect(body).toMatchObject({ type: 'custom_test', text: expect.stringContaining('test notification') });
    expect(verifySignature(SECRET, String(got!.headers['x-tesync-signature']), got!.body, Math.floor(Date.now() / 1000))).toBe(true);
    const [n] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.notifications`);
    expect(n!.n).toBe(0);
  });

  it('every endpoint answering 2xx is exit 0; --json says the same as data', async () => {
    const r = await runCli(['notify', '--test', '--json'], { DATABASE_URL: w.databaseUrl, TE_NOTIFY_URL: ok.url, LOG_LEVEL: 'warn' });
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { signed: boolean; endpoints: { endpoint: string; httpStatus: number; delivered: boolean }[] };
    expect(json).toMatchObject({ signed: false, endpoints: [{ endpoint: endpointLabel(ok.url), httpStatus: 200, delivered: true }] });
    expect(ok.received.at(-1)!.headers['x-tesync-signature']).toBeUndefined();
  });

  it('without TE_NOTIFY_URL there is nowhere to send: exit 2, saying so', async () => {
    const r = await runCli(['notify', '--test'], { DATABASE_URL: w.databaseUrl });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TE_NOTIFY_URL is not set');
  });
});
