// Who a worker's status page answers (TE_STATUS_PAGE): the worker binds TE_METRICS_PORT on every
// interface, as a Prometheus scraper needs; the page, which shows failures' bodies, answers this
// machine (loopback) only unless TE_STATUS_PAGE=all. Real HTTP, from loopback and from this
// machine's own address on another interface (a peer that is not loopback). And before that,
// the name a request is for (issue 55 part 6): a Host that is not loopback nor listed in
// TE_STATUS_HOSTS gets 421 and nothing of the page, on raw requests that set Host as they like.
import { getNaming } from '../../helpers/get-naming.ts';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.ts';
import { readHostList, type HostName } from '../../../src/lib/host-names.ts';
import { isLoopback, startMetricsServer } from '../../../src/runners/metrics/server.ts';
import type { StatusPage } from '../../../src/runners/metrics/page-handler.ts';
import { createTestLogger } from '../../helpers/services.ts';

/** A page that answers `/` and `/status.json` with a marker: what is shown is not the question here, who is shown it is. */
const page: StatusPage = {
  handle: (_req, res, path) => {
    if (path !== '/' && path !== '/status.json') return false;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(path === '/' ? 'the page' : '{"the":"model"}');
    return true;
  },
};

const hostsOf = (raw: string): HostName[] => {
  const r = readHostList(raw);
  if (!('hosts' in r)) throw new Error(raw);
  return r.hosts;
};

/** One request written byte for byte (a Host of any form, several, or none), on a connection of its own: the status and the body. */
function raw(port: number, head: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(`${head}Connection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [status] = /^HTTP\/1\.1 (\d{3})/.exec(text)?.slice(1) ?? ['0'];
      resolve({ status: Number(status), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

/** This machine's first address that is not loopback: connecting to it, the peer is not loopback either. */
function otherAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
  throw new Error('this machine has no IPv4 address besides loopback: the test needs one to be a peer that is not loopback');
}

const get = (host: string, port: number, path: string, hostHeader?: string) => getNaming(port, path, hostHeader, host).then(({ status, body }) => ({ status, body }));

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.5', false],
    ['::ffff:10.0.0.5', false],
    ['fe80::1', false],
    [undefined, false],
  ])('%s -> %s', (address, loopback) => expect(isLoopback(address)).toBe(loopback));
});

describe("a worker's status page", () => {
  it('TE_STATUS_PAGE defaults to local, takes all and off, and names itself when wrong', () => {
    expect(loadConfig({}).worker.statusPage).toBe('local');
    expect(loadConfig({ TE_STATUS_PAGE: 'all' }).worker.statusPage).toBe('all');
    expect(loadConfig({ TE_STATUS_PAGE: 'off' }).worker.statusPage).toBe('off');
    expect(() => loadConfig({ TE_STATUS_PAGE: 'public' })).toThrow(/TE_STATUS_PAGE/);
  });

  for (const pageFor of ['local', 'all'] as const) {
    it(`${pageFor}: the page from loopback; from another address ${pageFor === 'local' ? 'refused (403), /metrics and /healthz still answered' : 'answered too'}`, async () => {
      const { Registry } = await import('prom-client');
      const other = otherAddress();
      // The address it is reached by, listed as the operator lists the name a proxy or browser uses.
      const server = await startMetricsServer({ port: 0, registry: new Registry(), checks: {}, page, pageFor, hosts: hostsOf(other), logger: createTestLogger([], 'warn').logger });
      try {
        expect(await get('127.0.0.1', server.port, '/')).toEqual({ status: 200, body: 'the page' });
        const remote = await get(other, server.port, '/');
        if (pageFor === 'local') {
          expect(remote.status).toBe(403);
          expect(remote.body).toMatch(/TE_STATUS_PAGE=all/);
        } else {
          expect(remote).toEqual({ status: 200, body: 'the page' });
        }
        expect((await get(other, server.port, '/metrics')).status).toBe(200);
        expect((await get(other, server.port, '/healthz')).status).toBe(200);
      } finally {
        await server.close();
      }
    });
  }
});

describe('the Host a request names', () => {
  const HOSTS = 'status.example.com,worker:9464';

  it('not loopback nor listed: 421 and nothing of the page, for the page and its JSON; /healthz answers any', async () => {
    const { Registry } = await import('prom-client');
    const server = await startMetricsServer({ port: 0, registry: new Registry(), checks: {}, page, pageFor: 'all', hosts: hostsOf(HOSTS), logger: createTestLogger([], 'warn').logger });
    const p = server.port;
    try {
      // Answered: loopback names and addresses with or without the port, and the listed hosts.
      for (const host of ['localhost', `localhost:${p}`, '127.0.0.1', `127.0.0.1:${p}`, '127.9.9.9', `[::1]:${p}`, 'status.example.com', 'worker:9464']) {
        expect(await get('127.0.0.1', p, '/', host), host).toEqual({ status: 200, body: 'the page' });
        expect(await get('127.0.0.1', p, '/status.json', host), host).toEqual({ status: 200, body: '{"the":"model"}' });
      }
      // Refused: a name not listed (a rebinding page's), a listed name on another port, and
      // every form that is not one Host read whole.
      const refused = [
        'Host: example.org\r\n',
        `Host: rebind.attacker.example:${p}\r\n`,
        `Host: tesync.localhost:${p}\r\n`,
        'Host: worker:9465\r\n',
        `Host: 10.0.0.5:${p}\r\n`,
        'Host:\r\n',
        `Host: user@localhost:${p}\r\n`,
        `Host: localhost.:${p}\r\n`,
        `Host: localhost%2e:${p}\r\n`,
        `Host: localhost:${p}\r\nHost: example.org\r\n`,
        'Host: 127.1\r\n',
      ];
      for (const path of ['/', '/status.json', '/body/1', '/nothing-here']) {
        for (const host of refused) {
          const r = await raw(p, `GET ${path} HTTP/1.1\r\n${host}`);
          expect(r.status, `${path} ${JSON.stringify(host)}`).toBe(421);
          expect(r.body).toMatch(/^misdirected request: .*TE_STATUS_HOSTS/);
          expect(r.body).not.toMatch(/the page|model|not found/);
        }
        // HTTP/1.0 may leave Host out: no name, no page.
        expect((await raw(p, `GET ${path} HTTP/1.0\r\n`)).status).toBe(421);
      }
      // /metrics: the page's names, and any address (a scraper finds its targets by address).
      for (const host of [`localhost:${p}`, 'status.example.com', `10.0.0.5:${p}`, `[fd00::5]:${p}`]) expect((await get('127.0.0.1', p, '/metrics', host)).status, host).toBe(200);
      for (const host of ['Host: example.org\r\n', `Host: rebind.attacker.example:${p}\r\n`, '']) expect((await raw(p, `GET /metrics HTTP/1.0\r\n${host}`)).status, host).toBe(421);
      // /healthz answers whatever the Host, and whether there is one.
      for (const host of ['Host: example.org\r\n', `Host: 10.0.0.5:${p}\r\n`, 'Host: user@x\r\n', '']) expect((await raw(p, `GET /healthz HTTP/1.0\r\n${host}`)).status, host).toBe(200);
    } finally {
      await server.close();
    }
  });
});
