// Who a worker's status page answers (TE_STATUS_PAGE): the worker binds TE_METRICS_PORT on every
// interface, as a Prometheus scraper needs; the page, which shows failures' bodies, answers this
// machine (loopback) only unless TE_STATUS_PAGE=all. Real HTTP, from loopback and from this
// machine's own address on another interface (a peer that is not loopback).
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.ts';
import { isLoopback, startMetricsServer } from '../../../src/runners/metrics/server.ts';
import type { StatusPage } from '../../../src/runners/metrics/page-handler.ts';
import { createTestLogger } from '../../helpers/services.ts';

/** A page that answers `/` with a marker: what is shown is not the question here, who is shown it is. */
const page: StatusPage = {
  handle: (_req, res, path) => {
    if (path !== '/') return false;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('the page');
    return true;
  },
};

/** This machine's first address that is not loopback: connecting to it, the peer is not loopback either. */
function otherAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
  throw new Error('this machine has no IPv4 address besides loopback: the test needs one to be a peer that is not loopback');
}

function get(host: string, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host, port, path }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

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
      const server = await startMetricsServer({ port: 0, registry: new Registry(), checks: {}, page, pageFor, logger: createTestLogger([], 'warn').logger });
      try {
        expect(await get('127.0.0.1', server.port, '/')).toEqual({ status: 200, body: 'the page' });
        const other = otherAddress();
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
