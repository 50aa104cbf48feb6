// A fetch that gets no answer, told apart: refused and a blocked port are permanent (one try,
// a message naming the address and the variable), unreachable kinds stay transient with a
// reason that says which. Pure first (errors shaped as undici makes them), then real fetches
// on loopback, then the client: one recorded attempt for a refusal, all of them otherwise.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermanentError, UpstreamNetworkError } from '../../src/lib/errors.ts';
import {
  createUpstream,
  FAST_RETRY_POLICY,
  FETCH_BAD_PORTS,
  hostPort,
  InProcessBudget,
  MemoryRecorder,
  UpstreamBadPortError,
  UpstreamRefusedError,
  UpstreamTlsError,
  type UpstreamConfig,
} from '../../src/upstream/index.ts';
import { networkReason, permanentConnectError } from '../../src/upstream/connect-errors.ts';
import { boundedGet } from '../../src/upstream/http.ts';
import { freePort } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

/** A failed fetch as undici makes it: TypeError('fetch failed') with the system error as cause. */
const fetchFailed = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause });
const sysErr = (code: string, extra: object = {}) => Object.assign(new Error(`${code} x`), { code, ...extra });
const URL_A = new URL('http://api.example.test:8080/api/v1/tokens?from=2024-01-01');

describe('permanentConnectError (pure)', () => {
  it('a refused connection: the address of the base URL and the variable, no path, no query', () => {
    const err = permanentConnectError(fetchFailed(sysErr('ECONNREFUSED', { address: '10.0.0.7', port: 8080 })), URL_A, '/api/v1/tokens?from=2024-01-01', 'TE_APP_URL');
    expect(err).toBeInstanceOf(UpstreamRefusedError);
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ address: 'api.example.test:8080', variable: 'TE_APP_URL', path: '/api/v1/tokens?from=2024-01-01' });
    expect(err!.message).toBe('connection refused by api.example.test:8080 (TE_APP_URL)');
  });

  it('every address refused (an AggregateError of the addresses tried) is a refusal; one that was not reached is not', () => {
    const all = new AggregateError([sysErr('ECONNREFUSED'), sysErr('ECONNREFUSED')], 'x');
    expect(permanentConnectError(fetchFailed(all), URL_A, '/p', 'TE_APP_URL')).toBeInstanceOf(UpstreamRefusedError);
    const mixed = new AggregateError([sysErr('ECONNREFUSED'), sysErr('EHOSTUNREACH')], 'x');
    expect(permanentConnectError(fetchFailed(mixed), URL_A, '/p', 'TE_APP_URL')).toBeUndefined();
  });

  it('a port fetch will not use, by undici\'s words or by the list', () => {
    const blocked = new URL('http://127.0.0.1:6000/v1/tokens');
    const err = permanentConnectError(fetchFailed(new Error('bad port')), blocked, '/v1/tokens', 'TE_GATEWAY_URL');
    expect(err).toBeInstanceOf(UpstreamBadPortError);
    expect(err).toMatchObject({ port: 6000, variable: 'TE_GATEWAY_URL' });
    expect(err!.message).toBe("port 6000 is one Node's fetch refuses to use (TE_GATEWAY_URL)");
    expect(permanentConnectError(fetchFailed(new Error('reworded')), blocked, '/v1/tokens', 'TE_GATEWAY_URL')).toBeInstanceOf(UpstreamBadPortError);
  });

  it('anything else is not permanent: unreachable, DNS, reset, timeouts, other errors', () => {
    for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNRESET', 'UND_ERR_SOCKET']) {
      expect(permanentConnectError(fetchFailed(sysErr(code)), URL_A, '/p', 'TE_APP_URL'), code).toBeUndefined();
    }
    expect(permanentConnectError(sysErr('ECONNREFUSED'), URL_A, '/p', 'TE_APP_URL')).toBeUndefined();
    expect(permanentConnectError(new TypeError('Headers.append: invalid header value'), URL_A, '/p', 'TE_APP_URL')).toBeUndefined();
  });
});

describe('networkReason (pure): which kind of unreachable', () => {
  it.each([
    ['ENOTFOUND', 'DNS name not found: api.example.test (ENOTFOUND)'],
    ['EAI_AGAIN', 'DNS lookup of api.example.test failed for now (EAI_AGAIN)'],
    ['EHOSTUNREACH', 'host unreachable: api.example.test:8080 (EHOSTUNREACH)'],
    ['ENETUNREACH', 'network unreachable: api.example.test:8080 (ENETUNREACH)'],
    ['ETIMEDOUT', 'timed out connecting to api.example.test:8080 (ETIMEDOUT)'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timed out connecting to api.example.test:8080 (UND_ERR_CONNECT_TIMEOUT)'],
    ['ECONNRESET', 'connection reset by api.example.test:8080 (ECONNRESET)'],
    ['UND_ERR_SOCKET', 'connection closed by api.example.test:8080 (UND_ERR_SOCKET)'],
  ])('%s', (code, reason) => {
    expect(networkReason(fetchFailed(sysErr(code)), URL_A)).toBe(reason);
  });

  it('an unknown code or none: fetch\'s message with what the cause says, as before', () => {
    expect(networkReason(fetchFailed(sysErr('EWHATEVER')), URL_A)).toBe('fetch failed (EWHATEVER)');
    expect(networkReason(fetchFailed(new Error('other side closed')), URL_A)).toBe('fetch failed (other side closed)');
    expect(networkReason(new Error('plain'), URL_A)).toBe('plain');
  });

  it('host:port spells out the default port and never carries credentials, path or query', () => {
    expect(hostPort(new URL('https://u:p@example.test/x?key=1'))).toBe('example.test:443');
    expect(hostPort(new URL('http://example.test'))).toBe('example.test:80');
    expect(hostPort(new URL('http://[::1]:8080/'))).toBe('[::1]:8080');
  });
});

describe('FETCH_BAD_PORTS is the running Node\'s list', () => {
  const failure = async (port: number) => {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(patience(2000)) });
      return 'answered';
    } catch (err) {
      const cause = (err as { cause?: { message?: string; code?: string } }).cause;
      return cause?.message === 'bad port' ? 'bad port' : (cause?.code ?? 'other');
    }
  };

  it('each listed port is refused by fetch itself, and the ports beside them are not', async () => {
    for (const port of FETCH_BAD_PORTS) expect(await failure(port), String(port)).toBe('bad port');
    const beside = [...FETCH_BAD_PORTS].flatMap((p) => [p - 1, p + 1]).filter((p) => p > 0 && !FETCH_BAD_PORTS.has(p));
    for (const port of beside) expect(await failure(port), String(port)).not.toBe('bad port');
  });
});

const request = (url: URL, variable = 'TE_APP_URL') =>
  boundedGet({ url, path: `${url.pathname}${url.search}`, headers: {}, timeoutMs: patience(5000), maxBytes: 1e6, errorBodyMaxBytes: 1e4, urlVariable: variable });

describe('boundedGet on loopback', () => {
  it('a closed port: refused, named by the base URL\'s host:port and the variable', async () => {
    const port = await freePort();
    for (const host of ['127.0.0.1', 'localhost']) {
      const err = await request(new URL(`http://${host}:${port}/api/v1/tokens?from=2024-01-01&cursor=abc`)).catch((e: unknown) => e);
      expect(err, host).toBeInstanceOf(UpstreamRefusedError);
      expect((err as Error).message).toBe(`connection refused by ${host}:${port} (TE_APP_URL)`);
    }
  });

  it.each([6000, 10080, 9])('port %i: refused by fetch, nothing sent', async (port) => {
    const err = await request(new URL(`http://127.0.0.1:${port}/v1/tokens`), 'TE_GATEWAY_URL').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamBadPortError);
    expect((err as Error).message).toBe(`port ${port} is one Node's fetch refuses to use (TE_GATEWAY_URL)`);
  });

  it('a DNS name that does not exist: transient, and says so', async () => {
    const err = await request(new URL('http://no-such-host.invalid/api/v1/tokens')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect((err as Error).message).toMatch(/^GET \/api\/v1\/tokens: DNS (name not found: no-such-host\.invalid \(ENOTFOUND\)|lookup of no-such-host\.invalid failed for now \(EAI_AGAIN\))$/);
  });
});

describe('the client: a refusal is tried once, unreachable is retried', () => {
  const APP_KEY = canaryKey('app');
  const GW_KEY = canaryKey('gw');

  function client(config: Partial<UpstreamConfig>) {
    const recorder = new MemoryRecorder();
    const log = createTestLogger([APP_KEY, GW_KEY]);
    const upstream = createUpstream({
      config: { app: undefined, gateway: undefined, requestTimeoutMs: 5000, maxResponseBytes: 1e6, maxAttempts: 5, maxRateWaitMs: 10_000, ...config },
      budget: new InProcessBudget(),
      recorder,
      logger: log.logger,
      retry: FAST_RETRY_POLICY,
    });
    return { upstream, recorder, log };
  }

  it.each([
    ['app', 'refused', 'app.bundle', /^connection refused by 127\.0\.0\.1:\d+ \(TE_APP_URL\)$/],
    ['gateway', 'refused', 'gateway.tokens', /^connection refused by 127\.0\.0\.1:\d+ \(TE_GATEWAY_URL\)$/],
    ['app', 'bad port', 'app.tokens', /^port 6000 is one Node's fetch refuses to use \(TE_APP_URL\)$/],
    ['gateway', 'bad port', 'gateway.tokens', /^port 6000 is one Node's fetch refuses to use \(TE_GATEWAY_URL\)$/],
  ] as const)('%s %s: one attempt recorded without a status, the error thrown at once, no key in it', async (source, kind, route, message) => {
    const url = kind === 'refused' ? `http://127.0.0.1:${await freePort()}` : 'http://127.0.0.1:6000';
    const { upstream, recorder, log } = client({ [source]: { url, apiKey: source === 'app' ? APP_KEY : GW_KEY } });
    const err = await upstream.get({ route, ...(route === 'app.bundle' ? { params: { slug: 'aurora' } } : {}) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(kind === 'refused' ? UpstreamRefusedError : UpstreamBadPortError);
    expect((err as Error).message).toMatch(message);
    expect(recorder.requests).toHaveLength(1);
    expect(recorder.requests[0]).toMatchObject({ source, attempt: 1, httpStatus: null });
    expect(recorder.requests[0]!.error).toMatch(message);
    expect(log.lines().filter((l) => l.includes('retrying'))).toEqual([]);
    expect(`${(err as Error).message}${JSON.stringify(recorder.requests)}${log.lines().join('')}`).not.toMatch(new RegExp(`${APP_KEY}|${GW_KEY}`));
  });

  it('a DNS name not found: every attempt, and the reason in the error', async () => {
    const { upstream, recorder } = client({ app: { url: 'http://no-such-host.invalid', apiKey: undefined } });
    const err = await upstream.get({ route: 'app.tokens' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect((err as Error).message).toMatch(/DNS/);
    expect(recorder.requests.map((r) => [r.attempt, r.httpStatus])).toEqual([1, 2, 3, 4, 5].map((a) => [a, null]));
  });
});

describe('a TLS handshake Node refuses: permanent, said in words', () => {
  const servers: Server[] = [];
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  const listen = async (s: Server) => {
    servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return (s.address() as { port: number }).port;
  };

  it.each([
    ['a self-signed certificate', 'https', /^TLS certificate not accepted: self-signed certificate from 127\.0\.0\.1:\d+ \(DEPTH_ZERO_SELF_SIGNED_CERT\) \(TE_APP_URL\)$/],
    ['https to a server that speaks plain http', 'http', /^no TLS answer \(is the base URL http, not https\?\) from 127\.0\.0\.1:\d+ \(ERR_SSL_WRONG_VERSION_NUMBER\) \(TE_APP_URL\)$/],
  ] as const)('%s: one attempt, an UpstreamTlsError naming the address and the variable', async (_, serves, message) => {
    const handler = (_q: unknown, r: { end: (s: string) => void }) => r.end('{}');
    const port = await listen(serves === 'https' ? createHttpsServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, handler) : createHttpServer(handler));
    const recorder = new MemoryRecorder();
    const upstream = createUpstream({
      config: { app: { url: `https://127.0.0.1:${port}`, apiKey: undefined }, gateway: undefined, requestTimeoutMs: 5000, maxResponseBytes: 1e6, maxAttempts: 5, maxRateWaitMs: 10_000 },
      budget: new InProcessBudget(),
      recorder,
      logger: createTestLogger().logger,
      retry: FAST_RETRY_POLICY,
    });
    const err = await upstream.get({ route: 'app.tokens' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamTlsError);
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toMatch(message);
    expect(recorder.requests).toHaveLength(1);
  });
});
