// `tesync status --serve` answers its own names only (issue 55 part 6), run as the real CLI on
// a fresh warehouse: a request naming another Host (a DNS-rebinding page's, `example.org`) gets
// 421 and nothing of the page, for `/` and `/status.json`; loopback names, the name --host gave
// and TE_STATUS_HOSTS get the page; /healthz answers any Host. A TE_STATUS_HOSTS that is not a
// list of hosts is bad configuration: exit 2, one line naming the variable.
import { getNaming } from '../helpers/get-naming.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type CliProcess } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';

const get = (port: number, path: string, host: string) => getNaming(port, path, host);

describe('tesync status --serve and the Host it is asked for', () => {
  const db = useTestDatabase({ migrated: true });
  let serve: CliProcess | undefined;
  let port: number;

  beforeAll(async () => {
    serve = startCli(['status', '--serve', '--port', '0'], { DATABASE_URL: db.databaseUrl, LOG_LEVEL: 'warn', TE_STATUS_HOSTS: 'status.example.test' });
    await serve.waitFor(/Status page of .*: http:\/\/127\.0\.0\.1:\d+\//, 60_000);
    port = Number(/http:\/\/127\.0\.0\.1:(\d+)\//.exec(serve.stdout())![1]);
  }, patience(120_000));

  afterAll(async () => {
    serve?.child.kill('SIGKILL');
    await serve?.exited;
  }, patience(30_000));

  it('another name gets 421 and nothing of the page; its own names get the page', async () => {
    for (const path of ['/', '/status.json']) {
      for (const host of ['example.org', `rebind.attacker.example:${port}`, `localhost.localdomain:${port}`]) {
        const r = await get(port, path, host);
        expect(r.status, `${path} ${host}`).toBe(421);
        expect(r.type).toBe('text/plain; charset=utf-8');
        expect(r.body).toMatch(/^misdirected request:/);
        expect(r.body).not.toMatch(/groups|warehouse|tesync status --serve/);
      }
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`, 'status.example.test']) {
        const r = await get(port, path, host);
        expect(r.status, `${path} ${host}`).toBe(200);
        expect(r.body).toContain('tesync status --serve');
      }
    }
    expect((await get(port, '/healthz', 'example.org')).status).toBe(200);
  });

  it('a TE_STATUS_HOSTS that is not a list of hosts: exit 2, naming the variable', async () => {
    const r = await runCli(['status', '--serve', '--port', '0'], { DATABASE_URL: db.databaseUrl, TE_STATUS_HOSTS: 'status.example.test,*.example.test' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/TE_STATUS_HOSTS: "\*\.example\.test" is not a host name/);
  });
});
