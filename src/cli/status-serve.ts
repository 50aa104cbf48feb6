// `tesync status --serve`: the status page a worker serves at `/`, for a warehouse with no
// worker (or from another machine than the workers): the same reads and page, the rate budget
// read from where the workers share it, no queues. Read-only; bound to loopback unless --host
// says otherwise; until Ctrl-C. It answers the loopback names, TE_STATUS_HOSTS, and the name or
// address --host gives (unless that is every interface's).
import { sql } from 'drizzle-orm';
import type { Config } from '../lib/config.ts';
import { readHostName, type HostName } from '../lib/host-names.ts';
import type { Logger } from '../lib/logger.ts';
import { readBudgetNow } from '../runners/metrics/page-budget.ts';
import { PAGE_REFRESH_SECONDS, readPageData } from '../runners/metrics/page-data.ts';
import { createStatusPage } from '../runners/metrics/page-handler.ts';
import { pageThresholds, type ThresholdFlags } from '../runners/metrics/page-thresholds.ts';
import { startMetricsServer } from '../runners/metrics/server.ts';
import { endpointsOf } from '../runners/notify/deliver.ts';
import type { Warehouse } from '../store/connection.ts';
import { readFailureBody } from '../store/read/failure-bodies.ts';
import { outputWidth, untilSignal, UsageError } from './context.ts';
import { wrapToWidth } from '../lib/display-width.ts';
import { wholeNumberFlag } from './flag-values.ts';
import { syncBudget } from './sync-budget.ts';
import { terminalLogger } from './progress.ts';

export const DEFAULT_SERVE_HOST = '127.0.0.1';

export interface ServeOptions {
  /** Unset: TE_METRICS_PORT. */
  port?: string | undefined;
  host?: string | undefined;
  flags: ThresholdFlags;
}

/** Pure: the port asked for (0: any free one). */
export function servePort(raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : wholeNumberFlag('--port', raw, 0, 65535);
}

/** Pure: the host to bind, checked for what cannot be one. */
export function serveHost(raw: string | undefined): string {
  if (raw === undefined) return DEFAULT_SERVE_HOST;
  const host = raw.trim();
  if (host === '' || /[\s/?#@]/.test(host)) throw new UsageError(`--host needs an address or host name to listen on, e.g. --host 127.0.0.1 (got ${JSON.stringify(raw)})`);
  return host;
}

/** Pure: the hosts the page answers besides loopback: TE_STATUS_HOSTS, and the host it is bound to when that names one. */
export function serveHosts(bound: string, listed: readonly HostName[]): HostName[] {
  const own = readHostName(bound.includes(':') ? `[${bound}]` : bound);
  const everyInterface = own && own.kind !== 'name' && /^(0\.0\.0\.0|::)$/.test(own.host);
  return own && !everyInterface ? [...listed, own] : [...listed];
}

/** `http://127.0.0.1:9464/`, `http://[::1]:9464/` */
export function pageUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}

export async function serveStatusPage(config: Config, base: Logger, warehouse: Warehouse, options: ServeOptions): Promise<number> {
  // A person reads what it prints: on a terminal its warnings come in words, not JSON among
  // that text; what it does (served, stopped) the text says already.
  const logger = terminalLogger(base, 'warn');
  const port = servePort(options.port, config.worker.metricsPort);
  const host = serveHost(options.host);
  const shared = await syncBudget(config, warehouse, {}, 'status-serve');
  try {
    const server = await startMetricsServer({
      port,
      host,
      checks: { postgres: async () => void (await warehouse.query(sql`select 1`)) },
      // Bound to --host: whoever that lets in is who asked for the page.
      pageFor: 'all',
      hosts: serveHosts(host, config.worker.statusHosts),
      page: createStatusPage({
        read: () =>
          readPageData({
            warehouse,
            servedBy: 'tesync status --serve',
            refreshSeconds: PAGE_REFRESH_SECONDS,
            thresholds: (nowMs) => pageThresholds(config, nowMs, options.flags),
            budget: () => readBudgetNow(shared.budget, shared.notShared ?? null),
            notifyEndpoints: endpointsOf(config.notify.urls).map((e) => e.label),
          }),
        body: (id) => readFailureBody(warehouse, id),
        secrets: config.secrets,
        logger,
      }),
      logger,
    }).catch((err: unknown) => {
      const code = (err as { code?: unknown }).code;
      if (code === 'EADDRINUSE') throw new UsageError(`--port ${port}: something already listens there (a worker's page?); give another with --port N, or --port 0 for any free one`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UsageError(`--host ${host}: not an address of this machine`);
      throw err;
    });
    try {
      // Within the terminal (80 columns off one): the address first, where the warehouse is below it.
      const about = `(${warehouse.location}; read-only, refreshes itself every ${PAGE_REFRESH_SECONDS} s)`;
      const width = outputWidth(process.stdout);
      process.stdout.write(`Status page of the warehouse: ${pageUrl(host, server.port)}\n${wrapToWidth(about, width - 3).map((l) => `  ${l}`).join('\n')}\nCtrl-C stops serving.\n`);
      logger.info({ url: pageUrl(host, server.port) }, 'status page served');
      const signal = await untilSignal();
      logger.info({ signal }, 'status page: no longer serving');
      return 0;
    } finally {
      await server.close();
    }
  } finally {
    await shared.close();
  }
}
