// The HTTP server: one port serving both APIs. Each request is recorded on arrival, then goes
// through: latency, scripted answer, method check, outage, rate limit, redirect, faults,
// route (then its answer's losses, forms, hostile strings, page, ETag or 304), body faults.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_PREFIX, appRouteKind, handleApp, isAppKeyRoute } from './app-routes.ts';
import { isIsoDate } from './calendar.ts';
import { historyStreams } from './context.ts';
import { DatasetView, SimData } from './data.ts';
import type { SimDataset } from './dataset-types.ts';
import { Outages, Redirects } from './detours.ts';
import { etagOf, ifNoneMatchHits } from './etag.ts';
import { NO_FAULTS, mergeFaults, planFaults } from './faults.ts';
import { initialForms, mergeForms, withAddedField, withDuplicatedKey, type DataRouteKind, type FormState } from './forms.ts';
import { GATEWAY_PREFIX, OPENAPI_PATH, gatewayRouteKind, handleGateway, handleOpenapi } from './gateway-routes.ts';
import { hostileOption, withHostile } from './hostile.ts';
import { echoFor, echoesOption } from './echoes.ts';
import { toJson } from './json.ts';
import { NO_LOSSES, RemovedView, omitParts } from './losses.ts';
import { NO_PAGING, PageDrift, mergePaging, pageOf, pageParam } from './paging.ts';
import { bearerKey, type Outcome, type RouteEnv, type RouteRequest } from './outcome.ts';
import { defaultCode, problemBody, type Api } from './problem.ts';
import { rngFor } from './random.ts';
import { recomputationMinutes, recomputed, type Recomputation } from './recompute.ts';
import { budgetHeaders, RateLimiter, rateLimitFieldsOption, retryAfterValue, type LimitDecision, type LimitedBucket } from './rate-limit.ts';
import { sendReply, type Reply } from './send.ts';
import type { BucketName, KeyGrant, OutageWindow, RateLimitFields, RecordedRequest, ScriptedResponse, SimFaults, SimForms, SimEcho, SimHostile, SimLosses, SimOptions, SimOutage, SimPaging, SimRedirect, Simulator } from './types.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json';

export async function startSimulator(options: SimOptions = {}): Promise<Simulator> {
  const sim = new SimServer(options);
  await sim.listen(options.host ?? '127.0.0.1', options.port ?? 0);
  return sim;
}

function nonNegativeInt(name: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new RangeError(`simulator option ${name} must be an integer >= ${min}, got ${String(value)}`);
  return v;
}

function isoDate(name: string, value: string): string {
  if (!isIsoDate(value)) throw new RangeError(`simulator option ${name} must be a date YYYY-MM-DD, got ${String(value)}`);
  return value;
}

function verdict(value: string): 'fresh' | 'stale' {
  if (value !== 'fresh' && value !== 'stale') throw new RangeError(`simulator option freshness must be 'fresh' or 'stale', got ${String(value)}`);
  return value;
}

function recomputationOption(value: Recomputation | undefined): Recomputation {
  return value === 'eachResponse' ? value : nonNegativeInt('recomputation', value, 0);
}

function etagsOption(value: boolean | undefined): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new RangeError(`simulator option etags must be true or false, got ${String(value)}`);
  return value ?? false;
}

function classify(path: string): Api {
  if (path === APP_PREFIX || path.startsWith(`${APP_PREFIX}/`)) return 'app';
  if (path === OPENAPI_PATH || path === GATEWAY_PREFIX || path.startsWith(`${GATEWAY_PREFIX}/`)) return 'gateway';
  return 'none';
}

function splitSegments(rest: string): (string | null)[] {
  if (rest === '') return [];
  return rest
    .slice(1)
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return null;
      }
    });
}

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

class SimServer implements Simulator {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly store: SimData;
  private readonly seed: number;
  private readonly appKeys: Record<string, KeyGrant>;
  private readonly gatewayKeys: ReadonlySet<string>;
  private readonly limiter: RateLimiter;
  private readonly retryAfterForm: 'seconds' | 'http-date';
  private readonly now: () => number;
  private readonly resetForm: 'delta' | 'epoch';
  private readonly rateLimitFields: RateLimitFields;
  private readonly latency: number | [number, number];
  private epoch: number;
  private recomputation: Recomputation;
  private faults: SimFaults;
  private forms: FormState;
  private losses: SimLosses;
  private paging: SimPaging;
  /** the reads of each paged list, for `paging.drift` */
  private readonly pageReads = new PageDrift();
  private hostile: SimHostile[];
  private echoes: SimEcho[];
  private etags: boolean;
  /** The token lists already served cut (losses.ts: once per list). */
  private readonly cutLists = new Set<string>();
  private scripts: { prefix: string; queue: ScriptedResponse[] }[] = [];
  private readonly redirects = new Redirects();
  private readonly outage = new Outages();
  private seq = 0;
  private closed = false;
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private boundPort = 0;
  private host = '127.0.0.1';

  constructor(o: SimOptions) {
    this.seed = nonNegativeInt('seed', o.seed, 42);
    this.store = new SimData({
      seed: this.seed,
      tokens: nonNegativeInt('tokens', o.tokens, 12),
      historyDays: nonNegativeInt('historyDays', o.historyDays, 120, 1),
      chartsPerToken: nonNegativeInt('chartsPerToken', o.chartsPerToken, 3),
      ...(o.lastDate !== undefined ? { lastDate: isoDate('lastDate', o.lastDate) } : {}),
      ...(o.freshness !== undefined ? { freshness: verdict(o.freshness) } : {}),
      ...(o.historyStreams !== undefined ? { historyStreams: historyStreams(o.historyStreams) } : {}),
    });
    this.epoch = nonNegativeInt('epoch', o.epoch, 0);
    this.recomputation = recomputationOption(o.recomputation);
    this.appKeys = { ...o.appKeys };
    this.gatewayKeys = new Set(o.gatewayKeys ?? []);
    this.limiter = new RateLimiter(o.rateLimits);
    this.retryAfterForm = o.retryAfterForm ?? 'seconds';
    this.now = o.now ?? Date.now;
    this.resetForm = o.resetForm ?? 'delta';
    this.rateLimitFields = rateLimitFieldsOption(o.rateLimitFields);
    this.latency = o.latencyMs ?? 0;
    this.faults = mergeFaults(NO_FAULTS, o.faults ?? {});
    this.forms = initialForms(o.forms);
    this.losses = { ...NO_LOSSES, ...o.losses };
    for (const r of o.redirects ?? []) this.redirects.add(r);
    if (o.outage) this.outage.set(o.outage);
    this.paging = mergePaging(NO_PAGING, o.paging ?? {});
    this.hostile = hostileOption(o.hostile);
    this.echoes = echoesOption(o.echoes);
    this.etags = etagsOption(o.etags);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => {
        // a bug in the simulator must not hang the client: answer 500 or drop the socket
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end('simulator error');
        } else res.destroy();
      });
    });
  }

  async listen(host: string, port: number): Promise<void> {
    this.host = host;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.boundPort}`;
  }
  get port(): number {
    return this.boundPort;
  }
  get data(): SimDataset {
    return this.view();
  }

  resetRequests(): void {
    this.requests.length = 0;
  }
  setEpoch(epoch: number): void {
    this.epoch = nonNegativeInt('epoch', epoch, 0);
  }
  setRecomputation(r: Recomputation): void {
    this.recomputation = recomputationOption(r);
  }
  setFaults(faults: Partial<SimFaults>): void {
    this.faults = mergeFaults(this.faults, faults);
  }
  clearFaults(): void {
    this.faults = { ...NO_FAULTS };
  }
  setForms(forms: Partial<SimForms>): void {
    this.forms = mergeForms(this.forms, forms);
  }
  setLosses(losses: Partial<SimLosses>): void {
    this.losses = { ...this.losses, ...Object.fromEntries(Object.entries(losses).filter(([, v]) => v !== undefined)) };
    if (losses.omitted) this.cutLists.clear();
  }
  setPaging(paging: Partial<SimPaging>): void {
    this.paging = mergePaging(this.paging, paging);
    if (paging.drift !== undefined) this.pageReads.reset();
  }
  setHostile(list: SimHostile[]): void {
    this.hostile = hostileOption(list);
  }
  setEtags(on: boolean): void {
    this.etags = etagsOption(on);
  }
  setEchoes(list: SimEcho[]): void {
    this.echoes = echoesOption(list);
  }
  private view(): DatasetView {
    return this.store.view(this.epoch, this.losses.removed ? RemovedView : DatasetView);
  }
  setRateLimits(r: SimOptions['rateLimits']): void {
    this.limiter.configure(r);
  }
  script(pathPrefix: string, responses: ScriptedResponse[]): void {
    for (const r of responses) if (r.delayMs !== undefined) nonNegativeInt('script delayMs', r.delayMs, 0);
    this.scripts.push({ prefix: pathPrefix, queue: [...responses] });
  }
  redirect(r: SimRedirect): void {
    this.redirects.add(r);
  }
  clearRedirects(): void {
    this.redirects.clear();
  }
  setOutage(o: SimOutage | null): void {
    this.outage.set(o);
  }
  get outages(): readonly OutageWindow[] {
    return this.outage.windows;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleeping.clear();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await done;
  }

  /** a sleep that close() cuts short */
  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeping.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeping.add(entry);
    });
  }

  private latencyFor(seq: number): number {
    if (typeof this.latency === 'number') return this.latency;
    const [min, max] = this.latency;
    return Math.round(rngFor(this.seed, 'latency', seq).range(min, max));
  }

  private takeScript(pathAndQuery: string): ScriptedResponse | null {
    for (const s of this.scripts) {
      if (s.queue.length > 0 && pathAndQuery.startsWith(s.prefix)) {
        const next = s.queue.shift() ?? null;
        this.scripts = this.scripts.filter((x) => x.queue.length > 0);
        return next;
      }
    }
    return null;
  }

  /** tesync's name for the route a path answers, for what is applied per route */
  private routeKind(api: Api, path: string, segments: readonly (string | null)[]): DataRouteKind | null {
    return api === 'app' ? appRouteKind(segments) : api === 'gateway' && path !== OPENAPI_PATH ? gatewayRouteKind(segments) : null;
  }

  /** the addedFields form, in one place for every route: `data` plus the route's extra field */
  private decorate(kind: DataRouteKind | null, data: unknown): unknown {
    return kind === null ? data : withAddedField(data, this.forms.forms.addedFields[kind]);
  }

  /**
   * With `etags` on: the 200 `reply` with its ETag, or, when `ifNoneMatch` names the tag, a 304
   * with no body, the ETag and the headers the 200 would have had (its page's Link too).
   */
  private tagged(reply: Reply, servedAt: string | null, ifNoneMatch: string | undefined, decision: LimitDecision | null, headersFor: (d: LimitDecision | null, status: number) => Record<string, string>): Reply {
    if (!this.etags) return reply;
    const etag = etagOf(reply.body, servedAt);
    if (!ifNoneMatchHits(ifNoneMatch, etag)) return { ...reply, headers: { ...reply.headers, ETag: etag } };
    const { 'Content-Type': _type, ...kept } = reply.headers;
    return { status: 304, headers: { ...kept, ...headersFor(decision, 304), ETag: etag }, body: '' };
  }

  private limiterKey(bucket: LimitedBucket, headers: Record<string, string>, ip: string): string {
    if (bucket === 'app-key') {
      const key = bearerKey(headers);
      if (key !== null && this.appKeys[key]) return `key:${key}`;
    }
    return `ip:${ip}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const seq = ++this.seq;
    const rawUrl = req.url ?? '/';
    const qi = rawUrl.indexOf('?');
    // A redirect's alias is the same route with one more query parameter: served as the route.
    const path = qi < 0 ? rawUrl : rawUrl.slice(0, qi);
    const api = classify(path);
    const segments = api === 'app' ? splitSegments(path.slice(APP_PREFIX.length)) : api === 'gateway' && path !== OPENAPI_PATH ? splitSegments(path.slice(GATEWAY_PREFIX.length)) : [];
    const headers = flattenHeaders(req.headers);
    const bucket: BucketName = api === 'app' ? (isAppKeyRoute(segments) ? 'app-key' : 'app-public') : api === 'gateway' ? 'gateway' : 'none';
    const record: RecordedRequest = { seq, at: this.now(), method: req.method ?? 'GET', path: rawUrl, headers, remoteAddress: req.socket.remoteAddress ?? '', bucket, status: 0 };
    if (headers['if-none-match'] !== undefined) record.ifNoneMatch = headers['if-none-match'];
    this.requests.push(record);

    await this.sleep(this.latencyFor(seq));
    if (this.closed) return;
    // 1. a scripted answer wins over everything but latency; a held one waits here first
    const scripted = this.takeScript(rawUrl);
    if (scripted?.delayMs) {
      await this.sleep(scripted.delayMs);
      if (this.closed) return;
    }

    const now = this.now();
    const skew = this.faults.dateSkewMs;
    const servedAt = new Date(now + skew).toISOString();
    const requestId = `sim-${this.seed}-${seq}`;
    const ctl = {
      sleep: (ms: number) => this.sleep(ms),
      isClosed: () => this.closed,
      onStatus: (status: number) => (record.status = status),
      onBody: (sha256: string) => (record.bodySha256 = sha256),
    };
    const reset = () => {
      record.status = 0;
      req.socket.destroy();
    };
    const limiterKey = bucket === 'none' ? '' : this.limiterKey(bucket, headers, record.remoteAddress);
    const headersFor = (decision: LimitDecision | null, status: number, surface?: string): Record<string, string> => {
      const h: Record<string, string> = { Date: new Date(now + skew).toUTCString(), 'X-Request-Id': requestId };
      if ((api === 'app' || api === 'gateway') && decision && bucket !== 'none') Object.assign(h, budgetHeaders(this.rateLimitFields, api, bucket, decision, now, skew, this.resetForm));
      if (api === 'gateway') {
        h['X-Service-Source'] = surface ?? 'gateway';
        // a 304 sends what its 200 would have (RFC 9110 15.4.5)
        h['Cache-Control'] = status === 200 || status === 304 ? 'private, max-age=30' : 'no-store';
      }
      return h;
    };
    const problemReply = (status: number, code: string | undefined, detail: string, decision: LimitDecision | null, extensions: Record<string, unknown> = {}, extra: Record<string, string> = {}): Reply => {
      const ext = status >= 500 ? { requestId, ...extensions } : extensions;
      const body = toJson(problemBody({ api, status, code: code ?? defaultCode(api, status), detail, path, extensions: ext }));
      return { status, headers: { ...headersFor(decision, status), 'Content-Type': PROBLEM_TYPE, ...extra }, body };
    };

    // 1. the scripted answer taken above
    let scriptHeaders: Record<string, string> = {};
    if (scripted) {
      if (scripted.status === 0) return reset();
      const decision = bucket === 'none' ? null : this.limiter.peek(bucket, limiterKey, now);
      if (scripted.body !== undefined || scripted.status < 200 || scripted.status >= 300) {
        const extra: Record<string, string> = {};
        if (scripted.retryAfter !== undefined) extra['Retry-After'] = scripted.retryAfter;
        let reply: Reply;
        if (scripted.body !== undefined) {
          const type = scripted.status < 400 ? JSON_TYPE : PROBLEM_TYPE;
          reply = { status: scripted.status, headers: { ...headersFor(decision, scripted.status), 'Content-Type': type, ...extra }, body: scripted.body };
        } else {
          reply = problemReply(scripted.status, scripted.code, 'Scripted response.', decision, scripted.extensions, extra);
        }
        reply.headers = { ...reply.headers, ...scripted.headers };
        return sendReply(res, reply, null, ctl, servedAt);
      }
      scriptHeaders = { ...scripted.headers };
    }

    // 2. GET only
    if (req.method !== 'GET') {
      return sendReply(res, problemReply(405, undefined, `${req.method ?? ''} is not allowed; every route is GET.`, null, {}, { Allow: 'GET' }), null, ctl, servedAt);
    }

    // 2a. a key repeated back (echoes.ts), before the budget counts anything
    const echo = this.echoes.length === 0 ? null : echoFor(this.echoes, rawUrl, headers);
    if (echo) {
      const reply: Reply = echo.html !== undefined
        ? { status: echo.status, headers: { ...headersFor(null, echo.status), 'Content-Type': 'text/html; charset=utf-8', ...echo.headers }, body: echo.html }
        : problemReply(echo.status, undefined, echo.detail ?? '', null, echo.title === undefined ? {} : { title: echo.title }, echo.headers);
      return sendReply(res, reply, null, ctl, servedAt);
    }

    // 2b. an announced outage: answered before the budget counts anything
    const outageEnd = bucket === 'none' ? null : this.outage.hit(bucket, now);
    if (outageEnd !== null) {
      const detail = api === 'app' ? 'Scheduled maintenance: the engine is unavailable.' : 'The read plane is down for scheduled maintenance.';
      return sendReply(res, problemReply(503, undefined, detail, null, {}, { 'Retry-After': retryAfterValue(this.retryAfterForm, outageEnd, now, skew) }), null, ctl, servedAt);
    }

    // 3. the bucket's budget
    let decision: LimitDecision | null = null;
    if (bucket !== 'none') {
      decision = this.limiter.take(bucket, limiterKey, now);
      record.countedAt = now;
      if (decision.intoExhausted) record.intoExhausted = true;
      if (!decision.allowed) {
        const retryAfter = retryAfterValue(this.retryAfterForm, decision.resetAt, now, skew);
        const detail = api === 'app' ? 'Rate limit exceeded for this client.' : 'The public IP bucket exceeded its request budget.';
        return sendReply(res, problemReply(429, undefined, detail, decision, {}, { 'Retry-After': retryAfter }), null, ctl, servedAt);
      }
    }

    // 3b. a route that moved (counted on the budget like any answer)
    const moved = this.redirects.take(rawUrl);
    if (moved) {
      // The body repeats the Location, as web servers' redirect pages do.
      const headers = { ...headersFor(decision, moved.status), 'Content-Type': 'text/plain; charset=utf-8', Location: moved.location };
      return sendReply(res, { status: moved.status, headers, body: `Redirecting to ${moved.location}\n` }, null, ctl, servedAt);
    }

    // 4. faults that replace the answer
    const plan = bucket === 'none' ? null : planFaults(this.faults, this.seed, seq, rawUrl);
    if (plan?.reset) return reset();
    if (plan?.error) return sendReply(res, problemReply(500, undefined, 'Unexpected server failure.', decision), null, ctl, servedAt);
    if (plan?.unavailable) {
      const detail = api === 'app' ? 'An advertised dataset is temporarily unavailable.' : 'The read plane is unavailable.';
      return sendReply(res, problemReply(503, undefined, detail, decision), null, ctl, servedAt);
    }

    // 5. the route
    const env: RouteEnv = { view: this.view(), render: { seed: this.seed, forms: this.forms }, appKeys: this.appKeys, gatewayKeys: this.gatewayKeys };
    const routeReq: RouteRequest = { path, segments, query: new URLSearchParams(qi < 0 ? '' : rawUrl.slice(qi + 1)), headers };
    let outcome: Outcome;
    if (api === 'app') outcome = handleApp(routeReq, env);
    else if (api === 'gateway') outcome = path === OPENAPI_PATH ? handleOpenapi(env) : handleGateway(routeReq, env);
    else outcome = { kind: 'problem', status: 404, code: 'not_found', detail: `No route for ${path}.` };

    let reply: Reply;
    if (outcome.kind === 'problem') {
      reply = problemReply(outcome.status, outcome.code, outcome.detail, decision, outcome.extensions, outcome.headers);
    } else if (outcome.kind === 'raw') {
      const surface = outcome.surface;
      reply = { status: outcome.status, headers: { ...headersFor(decision, outcome.status, surface), 'Content-Type': outcome.contentType }, body: outcome.body };
      if (outcome.status === 200 && outcome.contentType.startsWith('application/json')) reply = this.tagged(reply, null, record.ifNoneMatch, decision, (d, status) => headersFor(d, status, surface));
    } else {
      const kind = this.routeKind(api, path, segments);
      const answer = omitParts(this.losses.omitted, kind, path, { data: outcome.data, meta: outcome.meta }, this.cutLists);
      const decorated = this.decorate(kind, answer.data);
      const view = env.view;
      const data = this.hostile.length === 0 ? decorated : withHostile(this.hostile, { kind, slug: segments.length >= 2 ? (segments[1] ?? null) : null, firstSlug: (source) => (source === 'gateway' ? view.gatewayTokens() : view.appTokens())[0]?.slug }, decorated);
      const page = pageOf(this.paging, kind, data, answer.meta, { baseUrl: this.url, path, query: routeReq.query }, this.pageReads);
      if (page?.kind === 'bad') {
        reply = problemReply(400, api === 'app' ? 'invalid_page' : 'invalid-parameter', page.detail, decision, api === 'app' ? {} : { parameter: pageParam(this.paging.form) });
      } else {
        const envelope = page ? { data: page.data, ...outcome.siblings, ...page.top, meta: { servedAt, ...page.meta } } : { data, ...outcome.siblings, meta: { servedAt, ...answer.meta } };
        const body = withDuplicatedKey(toJson(recomputed(envelope, recomputationMinutes(this.recomputation, seq))), kind === null ? undefined : this.forms.forms.duplicatedKeys[kind]);
        reply = { status: 200, headers: { ...headersFor(decision, 200, outcome.surface), 'Content-Type': JSON_TYPE, ...page?.headers }, body };
        const surface = outcome.surface;
        reply = this.tagged(reply, servedAt, record.ifNoneMatch, decision, (d, status) => headersFor(d, status, surface));
      }
    }
    reply.headers = { ...reply.headers, ...scriptHeaders };
    return sendReply(res, reply, plan, ctl, servedAt);
  }
}
