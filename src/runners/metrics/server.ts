// /healthz (the queue backend and Postgres reachable; a failure says why in one line) and /metrics (Prometheus text) on TE_METRICS_PORT.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.ts';

export type HealthCheck = () => Promise<void>;

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 3000;

export async function startMetricsServer(options: { port: number; registry: Registry; checks: Record<string, HealthCheck>; logger: Logger }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (path === '/healthz') {
      void health(options.checks).then(({ ok, body }) => {
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      });
    } else if (path === '/metrics') {
      void options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (err: unknown) => {
          options.logger.warn({ err }, 'metrics collection failed');
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
        },
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
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
