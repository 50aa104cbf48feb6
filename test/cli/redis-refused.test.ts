// `tesync enqueue` and `tesync worker` against a REDIS_URL where nothing listens, as the real
// CLI: exit 1 at once, saying the connection was refused (not "timed out" after 10 s).
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { freePort } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';

describe('a Redis that refuses connections', () => {
  // A warehouse for each command (a warehouse is bound to its upstream on first use).
  const databases = { enqueue: useTestDatabase({ migrated: true }), worker: useTestDatabase({ migrated: true }), twin: useTestDatabase({ migrated: true }) };
  // A Redis that takes the connection and never answers: a twin, `tesync worker` (the command
  // slower to start), waits out the 10 s connect timeout there. All three start together, so
  // "at once" is: before the twin ends, whatever this machine's speed.
  let silent: Server | undefined;
  const held = new Set<Socket>();
  const ended: string[] = [];
  let runs: Promise<Record<'enqueue' | 'worker' | 'twin', CliResult>>;

  /** `tesync COMMAND` on the warehouse of `name`; `ended` says when it ended. */
  async function run(name: keyof typeof databases, command: string, redisUrl: string): Promise<CliResult> {
    const r = await runCli([command], { TE_APP_URL: 'http://127.0.0.1:9', DATABASE_URL: databases[name].databaseUrl, REDIS_URL: redisUrl, TE_METRICS_PORT: String(await freePort()) }, { timeoutMs: 30_000 });
    ended.push(name);
    return r;
  }

  beforeAll(async () => {
    const refusedUrl = `redis://127.0.0.1:${await freePort()}`;
    silent = createServer((socket) => {
      held.add(socket);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const silentUrl = `redis://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const [enqueue, worker, twin] = [run('enqueue', 'enqueue', refusedUrl), run('worker', 'worker', refusedUrl), run('twin', 'worker', silentUrl)];
    runs = Promise.all([enqueue, worker, twin]).then(([e, w, t]) => ({ enqueue: e, worker: w, twin: t }));
    // Awaited by the tests; a rejection is theirs to report.
    runs.catch(() => {});
  });
  afterAll(async () => {
    await runs?.catch(() => {});
    for (const s of held) s.destroy();
    await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
  });

  it('the twin on a Redis that never answers waits out the connect timeout', async () => {
    const { twin } = await runs;
    expect(twin.code, twin.stderr).toBe(1);
    expect(twin.stderr).toMatch(/tesync: error: cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): no answer within 10 s \(timed out\)/);
  }, patience(40_000));

  for (const command of ['enqueue', 'worker'] as const) {
    it(`stops tesync ${command} at once, reported as refused`, async () => {
      const r = (await runs)[command];
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/tesync: error: cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): connection refused \(ECONNREFUSED\)/);
      expect(r.stderr).not.toContain('timed out');
      expect(ended.indexOf(command), `ended in this order: ${ended.join(', ')}`).toBeLessThan(ended.indexOf('twin'));
    }, patience(40_000));
  }
});
