// `tesync sim`: the bundled upstream simulator on its own, for trying tesync by hand.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DATA_ROUTE_KINDS, HISTORY_ALL_FORMS, PAGE_FORMS, PAGE_TOTALS, SIM_OMISSIONS, startSimulator, type SimForms, type SimOptions, type SimOutage, type SimRedirect } from '../../sim/index.ts';
import { apiKeyProblem } from '../lib/variables.ts';
import { FETCH_BAD_PORTS } from '../upstream/connect-errors.ts';
import { UsageError, untilSignal, type CommandContext } from './context.ts';
import { joinNegativeValues, shownValue, wholeNumberFlag } from './flag-values.ts';
import { HELP_COLUMNS, optionLines } from './help-text.ts';
import { demoCalendar } from './demo-simulator.ts';
import { wrapToWidth } from '../lib/display-width.ts';
import { terminalLogger } from './progress.ts';

const HELP = [
  `Usage: tesync sim [--port N] [--tokens N] [--history-days N] [--charts N]
                  [--seed N] [--rate-limit N/MS] ...

Runs the bundled simulator of both upstream APIs on loopback until Ctrl-C. Its
data runs up to today (UTC) unless --last-date says otherwise, as tesync demo's
does: a warehouse synced from it is hours old, as one synced from a live
upstream would be.

Options:`,
  ...optionLines([
    ['--port N', 'port to listen on (0 = a free one; default 0)'],
    ['--host H', 'address to bind (default 127.0.0.1)'],
    ['--tokens N', 'number of tokens (default 12)'],
    ['--history-days N', "days of history per token, up to the last date (default: from the first day of the month a year before, as tesync demo's)"],
    ['--last-date D', 'the last day of history, YYYY-MM-DD (default: today, UTC); a fixed day serves the same data every day, and ages as days pass'],
    ['--charts N', 'charts per token (default 3)'],
    ['--seed N', 'data seed (default 42)'],
    ['--epoch N', 'data epoch (default 0)'],
    ['--recomputation N', 'upstream recomputed the same data: every asOf and generatedAt N minutes later, values unchanged; eachResponse: moved on every response (default 0: none)'],
    ['--app-key K', 'an app API key with scope tokens:read for every token (repeatable; a key tesync accepts: 8 characters or more, no spaces, e.g. sim_app_key_0001; default: a random one)'],
    ['--gateway-key K', 'a gateway API key (repeatable; e.g. sim_gw_key_0001; default: a random one)'],
    ['--rate-limit N/MS', 'budget per bucket, e.g. 60/60000 (default: unlimited)'],
    ['--latency MS', 'added latency per response (default 0)'],
    ['--history-all FORM', 'shape of app history with stream=all: list (default), column, columnUntyped, nested, keyed, ambiguous, or mixed (per token)'],
    ['--chart-labels', "app chart data gets a text 'note' column"],
    ['--added-field R=F', "adds the field F (value 'added') to each object in the data of route R, e.g. app.tokens=extra (repeatable)"],
    ['--duplicated-key R=K', 'the first object of route R\'s body that has the key K names it twice (first with "0"), e.g. app.token=effectiveMarketCap (repeatable)'],
    ['--removed', "every set loses one member: a day of each app history, a row of each chart, a time of each trend, the page section 'charts', the last row of each screener, the last chart of each catalog of two or more, the timeframe 90d and the last series of each gateway chart (sim/README.md, losses)"],
    ['--omit PART', 'answers leave PART out: sections (token pages), bundleArrays (research bundles), tokenListCut (token lists cut to 2 items without a count, once) (repeatable)'],
    ['--redirect P[,S[,U]]', 'requests whose path (and query) starts with P get a redirect with status S (301, 302, 303, 307 (default) or 308): to the same route with one more query parameter (moved=1) on this host, which serves the same answer, or with U (a base URL, e.g. http://127.0.0.1:9) to the same path on that host (repeatable); e.g. --redirect /api/v1/tokens/aurora/charts/,307'],
    ['--outage B:N[:A]', 'after A requests (default 0) of bucket B (app-public, app-key, gateway), every request of it gets 503 with Retry-After counting down for N seconds, then it serves again; e.g. --outage gateway:25:40'],
    ['--retry-after-form F', 'Retry-After as seconds (default) or http-date'],
    ['--page-size N', 'serve the token lists, screeners and chart catalogs in pages of N items (default 0: whole)'],
    ['--page-form FORM', 'how a page names the next: metaNext (meta.next, default), linksNext (links.next, absolute), linkHeader (RFC 8288 Link header, relative), cursor (meta.nextCursor, asked as ?cursor=), topNext (a top-level next, absolute), topCursor (a top-level next_cursor beside has_more, asked as ?cursor=)'],
    ['--page-total T', 'meta.total on each page: exact (default), none, or larger (one more than the list holds: a list a reader takes as incomplete)'],
    ['--page-loop', 'the last page names page 2 again as its next (a loop)'],
    ['--page-drift N', 'a list that changes between its pages: on the first N reads of each paged list, the pages after page 1 come from the list without its first item (a total one less, an item on no page); Infinity: every read (default 0: none)'],
    ['--etags', 'every 200 JSON answer carries an ETag (a hash of its body without meta.servedAt); If-None-Match naming it gets 304 with no body'],
  ]),
].join('\n');

export async function runSim({ argv, logger: base }: CommandContext): Promise<number> {
  // A person reads its banner: on a terminal its log lines come in words, not JSON among it.
  const logger = terminalLogger(base);
  const { values } = parseArgs({
    args: joinNegativeValues(argv, NUMERIC),
    strict: true,
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      tokens: { type: 'string' },
      'history-days': { type: 'string' },
      'last-date': { type: 'string' },
      charts: { type: 'string' },
      seed: { type: 'string' },
      epoch: { type: 'string' },
      recomputation: { type: 'string' },
      'app-key': { type: 'string', multiple: true },
      'gateway-key': { type: 'string', multiple: true },
      'rate-limit': { type: 'string' },
      latency: { type: 'string' },
      'history-all': { type: 'string' },
      'chart-labels': { type: 'boolean' },
      'added-field': { type: 'string', multiple: true },
      'duplicated-key': { type: 'string', multiple: true },
      removed: { type: 'boolean' },
      omit: { type: 'string', multiple: true },
      redirect: { type: 'string', multiple: true },
      outage: { type: 'string' },
      'retry-after-form': { type: 'string' },
      'page-size': { type: 'string' },
      'page-form': { type: 'string' },
      'page-total': { type: 'string' },
      'page-loop': { type: 'boolean' },
      'page-drift': { type: 'string' },
      etags: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Local simulator keys are not secrets; make some up so the key routes can be tried.
  const appKeys = (values['app-key'] ?? [`sim_app_${randomBytes(8).toString('hex')}`]).map((k) => usableKey('--app-key', 'TE_APP_API_KEY', k));
  const gatewayKeys = (values['gateway-key'] ?? [`sim_gw_${randomBytes(8).toString('hex')}`]).map((k) => usableKey('--gateway-key', 'TE_GATEWAY_API_KEY', k));
  const options: SimOptions = {
    host: values.host,
    port: portFlag(values.port),
    appKeys: Object.fromEntries(appKeys.map((k) => [k, { scopes: ['tokens:read'], credits: 'all' as const }])),
    gatewayKeys,
  };
  if (values.tokens !== undefined) options.tokens = wholeNumberFlag('--tokens', values.tokens, 1, 100_000);
  // Dated as the demo dates its simulator (up to today, from the first day of the month a year
  // before): a warehouse synced from it is as old as one synced from a live upstream.
  const calendar = demoCalendar(values['last-date'] === undefined ? new Date() : dateFlag('--last-date', values['last-date']));
  options.lastDate = calendar.lastDate;
  options.historyDays = values['history-days'] === undefined ? calendar.historyDays : wholeNumberFlag('--history-days', values['history-days'], 1, 20_000);
  if (values.charts !== undefined) options.chartsPerToken = wholeNumberFlag('--charts', values.charts, 0, 100);
  if (values.seed !== undefined) options.seed = wholeNumberFlag('--seed', values.seed, 0, 2 ** 31);
  if (values.epoch !== undefined) options.epoch = wholeNumberFlag('--epoch', values.epoch, 0, 1000);
  if (values.recomputation !== undefined) {
    options.recomputation = values.recomputation === 'eachResponse' ? 'eachResponse' : wholeNumberFlag('--recomputation', values.recomputation, 0, 1_000_000, 'minutes, or eachResponse');
  }
  if (values.latency !== undefined) options.latencyMs = wholeNumberFlag('--latency', values.latency, 0, 60_000);
  if (values['rate-limit'] !== undefined) {
    const limit = rateLimitFlag(values['rate-limit']);
    options.rateLimits = { appPublic: limit, appKey: limit, gateway: limit };
  }
  options.forms = forms(values);
  options.losses = { removed: values.removed ?? false, omitted: (values.omit ?? []).map((o) => oneOf('--omit', o, SIM_OMISSIONS)) };
  options.redirects = (values.redirect ?? []).map(redirectFlag);
  if (values.outage !== undefined) options.outage = outageFlag(values.outage);
  if (values['retry-after-form'] !== undefined) options.retryAfterForm = oneOf('--retry-after-form', values['retry-after-form'], ['seconds', 'http-date'] as const);
  options.paging = {
    ...(values['page-size'] !== undefined ? { pageSize: wholeNumberFlag('--page-size', values['page-size'], 0, 100_000) } : {}),
    ...(values['page-form'] !== undefined ? { form: oneOf('--page-form', values['page-form'], PAGE_FORMS) } : {}),
    ...(values['page-total'] !== undefined ? { total: oneOf('--page-total', values['page-total'], PAGE_TOTALS) } : {}),
    ...(values['page-loop'] ? { loop: true } : {}),
    ...(values['page-drift'] !== undefined ? { drift: values['page-drift'] === 'Infinity' ? Infinity : wholeNumberFlag('--page-drift', values['page-drift'], 0, 1_000_000, 'reads, or Infinity') } : {}),
  };
  if (values.etags) options.etags = true;
  const sim = await startSimulator(options).catch((err: unknown) => {
    throw listenProblem(err, options) ?? err;
  });
  process.stdout.write(banner(sim.url, appKeys, gatewayKeys, { tokens: options.tokens ?? DEFAULT_TOKENS, lastDate: calendar.lastDate, historyDays: options.historyDays, today: new Date() }));
  const signal = await untilSignal();
  logger.info({ signal, requests: sim.requests.length }, 'simulator stopping');
  await sim.close();
  return 0;
}

/** The flags that take a number: a negative one is a value said wrong, not an option (joinNegativeValues). */
const NUMERIC = ['--port', '--tokens', '--history-days', '--charts', '--seed', '--epoch', '--recomputation', '--latency', '--page-size', '--page-drift'];

/** The simulator's own default (sim/index.ts). */
const DEFAULT_TOKENS = 12;

/**
 * Pure: what `tesync sim` prints once it listens, within 80 columns: where, its keys, what its
 * data is and up to when, and the lines that point tesync at it, one variable a line (for
 * .env, or a shell's export).
 */
export function banner(url: string, appKeys: readonly string[], gatewayKeys: readonly string[], data: { tokens: number; lastDate: string; historyDays: number; today: Date }): string {
  const today = data.today.toISOString().slice(0, 10);
  const upTo = data.lastDate === today ? `${data.lastDate} (today, UTC)` : `${data.lastDate} (UTC; a fixed day: tesync status counts its age from it)`;
  return [
    `tesync simulator listening on ${url}`,
    `  app host:  ${url}/api/v1`,
    ...wrapToWidth(`(key routes accept: ${appKeys.join(', ')})`, HELP_COLUMNS - 13, '').map((l) => `             ${l}`),
    `  gateway:   ${url}/v1`,
    ...wrapToWidth(`(keys: ${gatewayKeys.join(', ')})`, HELP_COLUMNS - 13, '').map((l) => `             ${l}`),
    ...wrapToWidth(`  data:      ${data.tokens} token${data.tokens === 1 ? '' : 's'}, ${data.historyDays} days of history up to ${upTo}`, HELP_COLUMNS, '             '),
    '',
    'Point tesync at it: these lines in .env (or exported), then npx tesync sync:',
    `  TE_APP_URL=${url}`,
    `  TE_APP_API_KEY=${appKeys[0]}`,
    `  TE_GATEWAY_URL=${url}`,
    `  TE_GATEWAY_API_KEY=${gatewayKeys[0]}`,
    'Ctrl-C stops it.',
    '',
  ].join('\n');
}

/** A day, YYYY-MM-DD (UTC). */
function dateFlag(flag: string, raw: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? new Date(`${raw}T00:00:00Z`) : undefined;
  if (!at || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== raw) throw new UsageError(`${flag} must be a day as YYYY-MM-DD, e.g. 2026-06-30, not ${shownValue(raw)}`);
  return at;
}

/**
 * A key the banner can hand to tesync: one tesync's own configuration accepts, and one word,
 * since it travels as `Authorization: Bearer <key>`. Refused otherwise, before anything listens.
 */
function usableKey(flag: string, variable: string, key: string): string {
  const problem = /\s/.test(key) ? 'has a space in it: a key travels as one word after Bearer' : apiKeyProblem(key);
  if (problem) throw new UsageError(`${flag}: tesync would refuse this key as ${variable}: ${problem}; e.g. ${flag} ${flag === '--app-key' ? 'sim_app_key_0001' : 'sim_gw_key_0001'}`);
  return key;
}

/** A port to listen on that tesync can also reach: Node's fetch will not connect to some. */
function portFlag(raw: string): number {
  const port = wholeNumberFlag('--port', raw, 0, 65535);
  if (FETCH_BAD_PORTS.has(port)) throw new UsageError(`--port ${port} is one Node's fetch refuses to use: tesync could not reach the simulator there; choose another, or 0 for a free one`);
  return port;
}

/** N/MS: N requests per MS milliseconds, each bucket. */
function rateLimitFlag(raw: string): { limit: number; windowMs: number } {
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  const limit = m ? Number(m[1]) : NaN;
  const windowMs = m ? Number(m[2]) : NaN;
  if (!(limit >= 1 && limit <= 1_000_000 && windowMs >= 1 && windowMs <= 86_400_000)) {
    throw new UsageError(`--rate-limit must look like N/MS: N requests (1 to 1000000) per MS milliseconds (1 to 86400000), e.g. 60/60000, not ${shownValue(raw)}`);
  }
  return { limit, windowMs };
}

/** Pure: a failure to listen that is the flags' doing, as a usage error naming the flag; undefined otherwise. */
export function listenProblem(err: unknown, options: Pick<SimOptions, 'host' | 'port'>): UsageError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (code === 'EADDRINUSE') return new UsageError(`--port ${port} is taken on ${host} (EADDRINUSE): choose another, or 0 for a free one`);
  if (code === 'EACCES') return new UsageError(`--port ${port} needs privileges this process does not have on ${host} (EACCES): choose one above 1023, or 0 for a free one`);
  if (code === 'EADDRNOTAVAIL') return new UsageError(`--host ${shownValue(host)} is not an address of this machine (EADDRNOTAVAIL)`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new UsageError(`--host ${shownValue(host)} is not a name or address that resolves here (${code})`);
  return undefined;
}

interface FormFlags {
  'history-all'?: string;
  'chart-labels'?: boolean;
  'added-field'?: string[];
  'duplicated-key'?: string[];
}

/** the response forms the flags ask for; flags left out keep the simulator's defaults */
function forms(values: FormFlags): Partial<SimForms> {
  const out: Partial<SimForms> = {};
  if (values['history-all'] !== undefined) out.historyAll = oneOf('--history-all', values['history-all'], [...HISTORY_ALL_FORMS, 'mixed'] as const);
  if (values['chart-labels']) out.chartLabels = true;
  if (values['added-field'] !== undefined) out.addedFields = Object.fromEntries(values['added-field'].map((raw) => routeField('--added-field', raw)));
  if (values['duplicated-key'] !== undefined) out.duplicatedKeys = Object.fromEntries(values['duplicated-key'].map((raw) => routeField('--duplicated-key', raw)));
  return out;
}

function oneOf<T extends string>(flag: string, raw: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === raw);
  if (found === undefined) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}`);
  return found;
}

/** ROUTE=FIELD, ROUTE one of tesync's route names that answer with `data` */
function routeField(flag: string, raw: string): [string, string] {
  const m = /^([a-z]+\.[a-z]+)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(raw);
  const route = m?.[1];
  const field = m?.[2];
  if (route === undefined || field === undefined) throw new UsageError(`${flag} must look like ROUTE=FIELD, e.g. app.tokens=extra`);
  return [oneOf(`${flag} ROUTE`, route, DATA_ROUTE_KINDS), field];
}

/** PATH[,STATUS[,URL]]: a route answered with a redirect (sim/detours.ts) */
function redirectFlag(raw: string): SimRedirect {
  const [from = '', status, to, ...rest] = raw.split(',');
  if (!from.startsWith('/') || rest.length > 0) throw new UsageError('--redirect must look like PATH[,STATUS[,URL]], e.g. /api/v1/tokens/aurora/charts/,307');
  const r: SimRedirect = { from, status: Number(oneOf('--redirect STATUS', status ?? '307', ['301', '302', '303', '307', '308'] as const)) };
  if (to !== undefined) {
    if (!/^https?:\/\/[^/]+\/?$/.test(to)) throw new UsageError('--redirect URL must be a base URL like http://127.0.0.1:9');
    r.to = to;
  }
  return r;
}

/** BUCKET:SECONDS[:AFTER]: an announced outage (sim/detours.ts) */
function outageFlag(raw: string): SimOutage {
  const [bucket = '', seconds = '', after, ...rest] = raw.split(':');
  if (rest.length > 0 || seconds === '') throw new UsageError('--outage must look like BUCKET:SECONDS[:AFTER], e.g. gateway:25:40');
  return {
    bucket: oneOf('--outage BUCKET', bucket, ['app-public', 'app-key', 'gateway'] as const),
    seconds: wholeNumberFlag('--outage SECONDS', seconds, 1, 86_400),
    ...(after !== undefined ? { after: wholeNumberFlag('--outage AFTER', after, 0, 1_000_000) } : {}),
  };
}
