// /healthz (the queue backend and Postgres reachable; a failure says why in one line), /metrics
// (Prometheus text) and the status page (page-handler.ts: `/`, `/status.json`, `/body/<id>`)
// on TE_METRICS_PORT. A worker's binds as it always has (every interface, as /metrics needs
// for a scraper), and its page answers loopback only unless TE_STATUS_PAGE=all; `tesync status
// --serve` gives a host (loopback unless told otherwise) and its page answers whoever it lets in.
// Before any of that, the Host a request names (host-guard.ts): everything but /healthz answers
// its own names only, 421 otherwise. /healthz shares nothing with the page: no lock, no queue.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { HostName } from '../../lib/host-names.ts';
import type { Logger } from '../../lib/logger.ts';
import { hostAnswered, MISDIRECTED } from './host-guard.ts';
import type { StatusPage } from './page-handler.ts';

export type HealthCheck = () => Promise<void>;

export interface MetricsServer {
  port: number;
  /** The address it listens on (`::` or `0.0.0.0`: every interface). */
  host: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  port: number;
  /** Unset: every interface (the worker's binding since /metrics came). */
  host?: string;
  /** Unset: no /metrics. */
  registry?: Registry;
  checks: Record<string, HealthCheck>;
  page?: StatusPage;
  /** Who the page answers: `local`, requests from loopback only (TE_STATUS_PAGE's default); `all`, any. */
  pageFor?: 'local' | 'all';
  /** Hosts answered besides the loopback names (TE_STATUS_HOSTS). */
  hosts?: readonly HostName[];
  logger: Logger;
}

/** Pure: whether a peer address is this machine's loopback (IPv4, IPv6, or IPv4 in IPv6). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

const CHECK_TIMEOUT_MS = 3000;

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, page } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (path === '/healthz') {
      void health(options.checks).then(({ ok, body }) => {
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      });
    } else if (!hostAnswered(req.headersDistinct.host, path === '/metrics' ? 'metrics' : 'page', options.hosts ?? [])) {
      res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(MISDIRECTED), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).end(MISDIRECTED);
    } else if (path === '/metrics' && registry) {
      void registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => {
          options.logger.warn({ err }, 'metrics collection failed');
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
        },
      );
    } else if (page && options.pageFor !== 'all' && !isLoopback(req.socket.remoteAddress)) {
      // The port is every interface's for /metrics; the page, which shows the failures' bodies,
      // is this machine's unless TE_STATUS_PAGE=all says otherwise.
      res.writeHead(403, { 'content-type': 'text/plain' }).end('the status page answers on this machine only (loopback); TE_STATUS_PAGE=all opens it to whoever reaches the port\n');
    } else if (!page?.handle(req, res, path)) {
      const routes = [...(page ? ['/'] : []), '/healthz', ...(registry ? ['/metrics'] : [])];
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: try ${routes.join(', ')}\n`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.host === undefined) server.listen(options.port, () => resolve());
    else server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: address.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function health(checks: Record<string, HealthCheck>): Promise<{ ok: boolean; body: Record<string, string> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)));
      try {
        await Promise.race([check(), timeout]);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, `unreachable: ${healthCause(err)}`] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const body = Object.fromEntries(entries);
  return { ok: entries.every(([, v]) => v === 'ok'), body: { status: entries.every(([, v]) => v === 'ok') ? 'ok' : 'unhealthy', ...body } };
}

/**
 * Pure: why a check failed, in one line: the cause under a query library's wrapper (drizzle's
 * "Failed query: select 1 / params:" says which query, not why), with its code.
 */
export function healthCause(err: unknown): string {
  let e = err;
  while (e instanceof Error && e.cause !== undefined && /^Failed query/.test(e.message)) e = e.cause;
  if (!(e instanceof Error)) return String(e).split('\n')[0]!;
  const code = (e as { code?: unknown }).code;
  const line = e.message.split('\n')[0]!.trim() || e.name;
  return typeof code === 'string' && !line.includes(code) ? `${line} (${code})` : line;
}
