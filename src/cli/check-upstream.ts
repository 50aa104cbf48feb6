// `tesync check`'s questions to the upstreams: one request per configured source (its token
// list: public on the app host, keyed on the gateway, so there it asks about the key too) and
// one keyed request for TE_APP_API_KEY (one token's research bundle). Each answer is judged
// (pure functions below) into the variable to look at and why. Through the one upstream client:
// its routes, safe URLs and rate budget; the key only in its header, never in a URL or a line.
import type { Config } from '../lib/config.ts';
import { InvalidResponseError, ProblemError, RateLimitedError, ResponseTooLargeError, UpstreamNetworkError, UpstreamServerError, UpstreamTimeoutError } from '../lib/errors.ts';
import { SOURCE_URL_VARIABLE, UpstreamBadPortError, UpstreamRefusedError, UpstreamTlsError } from '../upstream/connect-errors.ts';
import type { Upstream, UpstreamResponse } from '../upstream/request.ts';
import type { RouteName, Source } from '../upstream/routes.ts';

export type CheckStatus = 'ok' | 'failed' | 'skipped';

export interface CheckResult {
  /** What was checked. */
  check: 'database' | 'binding' | 'source' | 'key' | 'redis';
  /** The variable to look at. */
  variable: string;
  status: CheckStatus;
  message: string;
  /**
   * A failure that is bad configuration by the README's exit codes, which sync and status
   * refuse with exit 2 (a login or database the server refused, a warehouse bound to another
   * upstream or holding a newer tesync's schema): check exits 2 for it too, not 1.
   */
  configuration?: true;
}

/** An answer of the upstream client: a response, or what it threw. */
export type Answer = { path: string; res: UpstreamResponse } | { path: string; err: unknown };

const NAME: Readonly<Record<Source, string>> = { app: 'the app host', gateway: 'the gateway' };
const KEY_VARIABLE: Readonly<Record<Source, string>> = { app: 'TE_APP_API_KEY', gateway: 'TE_GATEWAY_API_KEY' };
const PREFIX: Readonly<Record<Source, string>> = { app: '/api/v1', gateway: '/v1' };

const result = (check: CheckResult['check'], variable: string, status: CheckStatus, message: string): CheckResult => ({ check, variable, status, message });

/** Asks each configured source and key once; what each answer means, in order. */
export async function checkUpstreams(config: Pick<Config, 'app' | 'gateway'>, upstream: Upstream): Promise<CheckResult[]> {
  const ask = async (route: RouteName, path: string, params?: Record<string, string>): Promise<Answer> => {
    try {
      return { path, res: await upstream.get({ route, ...(params ? { params } : {}) }) };
    } catch (err) {
      return { path, err };
    }
  };
  const out: CheckResult[] = [];
  if (!config.app) out.push(result('source', 'TE_APP_URL', 'skipped', 'unset: the app source is off'));
  else {
    const list = await ask('app.tokens', '/api/v1/tokens');
    out.push(judgeTokenList('app', config.app.url, list));
    if (!config.app.apiKey) out.push(result('key', 'TE_APP_API_KEY', 'skipped', 'unset: research bundles will be recorded `skipped`'));
    else {
      const slug = firstSlug(list);
      if (slug === undefined) {
        const why = 'res' in list && tokenCount(list.res.body) === 0 ? 'the app host lists no token to ask a bundle of' : 'the app host did not answer as itself (see TE_APP_URL)';
        out.push(result('key', 'TE_APP_API_KEY', 'skipped', `not checked: ${why}`));
      } else out.push(judgeAppKey(await ask('app.bundle', `/api/v1/tokens/${encodeURIComponent(slug)}/full`, { slug }), slug));
    }
  }
  if (!config.gateway) out.push(result('source', 'TE_GATEWAY_URL', 'skipped', 'unset: the gateway source is off'));
  else out.push(...judgeGateway(config.gateway.url, await ask('gateway.tokens', '/v1/tokens')));
  return out;
}

/** Pure: the slugs a token list's first page names, as both APIs list them (`data[].slug`); null when it is not such a list. */
export function listedSlugs(body: unknown): string[] | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof body !== 'object' || body === null || !Array.isArray(data)) return null;
  const slugs = data.map((item) => (item as { slug?: unknown } | null)?.slug);
  return slugs.every((s): s is string => typeof s === 'string' && s !== '') ? slugs : null;
}

const tokenCount = (body: unknown) => listedSlugs(body)?.length ?? -1;

function firstSlug(a: Answer): string | undefined {
  return 'res' in a ? listedSlugs(a.res.body)?.[0] : undefined;
}

/** Pure: what a source's token list answer says of its base URL (and, on the gateway, its key). */
export function judgeTokenList(source: Source, baseUrl: string, a: Answer): CheckResult {
  const variable = SOURCE_URL_VARIABLE[source];
  const at = `${NAME[source]} at ${baseUrl}`;
  if ('res' in a) {
    const n = tokenCount(a.res.body);
    if (n >= 0) return result('source', variable, 'ok', `${at} answered GET ${a.path} (${a.res.status}, ${n} token${n === 1 ? '' : 's'} on its first page)`);
    return result('source', variable, 'failed', `${at} answers GET ${a.path} with JSON of another shape (no \`data\` list of tokens): not this API`);
  }
  return unanswered('source', variable, source, at, a);
}

/** Pure: what the answer to one token's research bundle says of TE_APP_API_KEY. */
export function judgeAppKey(a: Answer, slug: string): CheckResult {
  const variable = 'TE_APP_API_KEY';
  if ('res' in a) return result('key', variable, 'ok', `the app host accepted the key (GET ${a.path}: ${a.res.status})`);
  const err = a.err;
  if (err instanceof ProblemError) {
    const said = problemText(err);
    if (err.status === 401) return result('key', variable, 'failed', `the app host refused the key (${said}): check the key`);
    if (err.status === 403) return result('key', variable, 'failed', `the app host refused the key for ${slug} (${said}${err.scope ? `: it lacks the scope ${err.scope}` : ''})`);
    // A key upstream knows, without credits for this token: bundles of such tokens are recorded `no_credits`.
    if (err.status === 402) return result('key', variable, 'ok', `the app host knows the key; it has no credits for ${slug} (${said})`);
    return result('key', variable, 'failed', `could not tell whether the app host accepts the key: GET ${a.path} answered ${said}`);
  }
  return unanswered('key', 'TE_APP_URL', 'app', 'the app host', a);
}

/** Pure: the gateway's token list says of TE_GATEWAY_URL and, since every gateway route is keyed, of TE_GATEWAY_API_KEY. */
export function judgeGateway(baseUrl: string, a: Answer): CheckResult[] {
  const variable = 'TE_GATEWAY_API_KEY';
  if (!('res' in a) && a.err instanceof ProblemError && (a.err.status === 401 || a.err.status === 403)) {
    const said = problemText(a.err);
    return [
      result('source', 'TE_GATEWAY_URL', 'ok', `the gateway at ${baseUrl} answered GET ${a.path} (${said}, to the key)`),
      result('key', variable, 'failed', `the gateway refused the key (${said}): check the key`),
    ];
  }
  const url = judgeTokenList('gateway', baseUrl, a);
  const key = url.status === 'ok' ? result('key', variable, 'ok', `the gateway accepted the key (GET ${a.path})`) : result('key', variable, 'skipped', 'not checked: the gateway did not answer as itself (see TE_GATEWAY_URL)');
  return [url, key];
}

/** Pure: a request that got no answer of this API: unreachable, or something else answers there. */
function unanswered(check: CheckResult['check'], variable: string, source: Source, at: string, a: Extract<Answer, { err: unknown }>): CheckResult {
  const err = a.err;
  const failed = (message: string) => result(check, variable, 'failed', message);
  if (err instanceof UpstreamRefusedError || err instanceof UpstreamBadPortError || err instanceof UpstreamTlsError || err instanceof UpstreamNetworkError || err instanceof UpstreamTimeoutError) {
    return failed(`cannot reach ${at}: ${withoutVariable(withoutPath(err.message, a.path), variable)}`);
  }
  if (err instanceof RateLimitedError) return failed(`${at} is rate limiting this address (${err.reason}): it is there; check again later`);
  if (err instanceof UpstreamServerError) return failed(`${at} answered GET ${a.path} with ${problemText(err)}: it is not serving now; check again later`);
  if (err instanceof ProblemError) {
    const said = problemText(err);
    if (err.status === 404) return failed(`${at} has no ${a.path} (${said}): not this API; is ${variable} the base URL, without ${PREFIX[source]}?`);
    if (err.status >= 300 && err.status < 400) return failed(`${at} redirects GET ${a.path} where tesync does not follow (${said}): point ${variable} where the API is`);
    if (err.status === 401 || err.status === 403) return failed(`${at} asks for a key on a public route (${said}): not this API, or something in front of it`);
    return failed(`${at} answered GET ${a.path} with ${said}: not as this API answers`);
  }
  if (err instanceof ResponseTooLargeError) return failed(`${at} answered GET ${a.path} with more than ${err.limitBytes} bytes: not this API`);
  if (err instanceof InvalidResponseError) return failed(`${at} answers GET ${a.path}, but not as this API: ${withoutPath(err.message, a.path)}`);
  return failed(`${at}: GET ${a.path} failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** `401 unauthorized`, `404 Not Found`: the status and the problem's code (or title). */
function problemText(err: ProblemError | UpstreamServerError): string {
  const what = err.code ?? err.title;
  return what ? `${err.status} ${what}` : String(err.status);
}

/** The client's messages end with the variable (`... (TE_APP_URL)`): the line names it already. */
function withoutVariable(message: string, variable: string): string {
  return message.endsWith(` (${variable})`) ? message.slice(0, -(variable.length + 3)) : message;
}

function withoutPath(message: string, path: string): string {
  const prefix = `GET ${path}: `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}
