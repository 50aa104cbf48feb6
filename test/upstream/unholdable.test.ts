// Bodies Postgres cannot hold exactly (issue 44), over real HTTP into a real warehouse: a string
// holding U+0000 or an unpaired surrogate, bytes that are not UTF-8. Refused by the client
// before anything is written, tried once, archived `invalid` byte for byte (never with a
// character dropped or replaced); a normal body is kept as before; brotli is offered and read.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync } from 'node:zlib';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/lib/errors.ts';
import { keepInvalidBody, WarehouseRecorder } from '../../src/store/books/request-log.ts';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, type Upstream } from '../../src/upstream/index.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { createTestLogger } from '../helpers/services.ts';

const RUN_ID = '44444444-5a6b-4c1d-9e2f-0a1b2c3d4e5f';
const CANNOT = 'which Postgres cannot store exactly';

const fx = useSimAndWarehouse();

/** A server of exact bytes: what `next` holds is served for any path, as it is. */
let own: Server;
let ownUrl: string;
let next: { body: Buffer; headers?: Record<string, string> } = { body: Buffer.from('{}') };
const ownSeen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  own = createServer((req, res) => {
    ownSeen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json', ...next.headers }).end(next.body);
  });
  await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
  ownUrl = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => own?.close(r));
});

const open: WarehouseRecorder[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

beforeEach(async () => {
  fx.sim.resetRequests();
  ownSeen.length = 0;
  // The archive refuses to be emptied (src/store/sql/history.sql): a test's reset goes around its guard.
  await fx.warehouse.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.execute(sql`truncate sync.requests, sync.raw_responses`);
  });
});

/** A client of the app host at `url` (the simulator unless told), recording into the warehouse. */
function setup(url = fx.sim.url): { upstream: Upstream; recorder: WarehouseRecorder } {
  const log = createTestLogger();
  const recorder = new WarehouseRecorder(fx.warehouse, log.logger);
  open.push(recorder);
  const upstream = createUpstream({
    config: { app: { url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: patience(3_000), maxResponseBytes: 1 << 20, maxAttempts: 4, maxRateWaitMs: 10_000 },
    budget: new InProcessBudget(),
    recorder,
    logger: log.logger,
    retry: FAST_RETRY_POLICY,
  });
  return { upstream, recorder };
}

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

type Archived = { path: string; status: string; sha256: string; served_sha256: string; body: unknown; body_text: string | null; body_bytes: Buffer | null };
const archived = () =>
  fx.warehouse.query<Archived>(
    sql`select path, status, sha256, encode(sha256(coalesce(body_bytes, convert_to(body_text, 'UTF8'))), 'hex') as served_sha256, body, body_text, body_bytes from sync.raw_responses order by id`,
  );
const requestErrors = () => fx.warehouse.query<{ http_status: number; error: string | null; problem_code: string | null }>(sql`select http_status, error, problem_code from sync.requests order by id`);

/** Neither U+0000 nor a surrogate code unit. */
const clean = (s: string) => !/[\u0000\ud800-\udfff]/.test(s);

async function refusal(upstream: Upstream): Promise<InvalidResponseError> {
  const err = await upstream.get({ route: 'app.tokens', runId: RUN_ID }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidResponseError);
  return err as InvalidResponseError;
}

describe('a body Postgres cannot hold exactly', () => {
  it.each([
    ['U+0000 in a name', '{"data":[{"slug":"a","displayName":"x\\u0000y"}],"meta":{}}', `data[0].displayName holds U+0000, ${CANNOT}`],
    ['a lone surrogate in a key', '{"data":[{"slug":"b","labels":{"note\\ud83d":"x"}}],"meta":{}}', `data[0].labels["note\\ud83d"] holds an unpaired surrogate U+D83D in its name, ${CANNOT}`],
  ])('%s: refused with its path, tried once, archived invalid as served', async (_what, body, where) => {
    fx.sim.script('/api/v1/tokens', [{ status: 200, body }]);
    const { upstream, recorder } = setup();
    const err = await refusal(upstream);
    expect(err.message).toBe(`GET /api/v1/tokens: not understood: ${where}`);
    expect(clean(err.message)).toBe(true);
    expect(fx.sim.requests.map((r) => r.path)).toEqual(['/api/v1/tokens']);

    await recorder.flush();
    const [row, more] = await archived();
    expect(more).toBeUndefined();
    expect(row).toMatchObject({ path: '/api/v1/tokens', status: 'invalid', body: null, body_text: body, body_bytes: null });
    expect(row!.sha256).toBe(sha256(body));
    expect(row!.served_sha256).toBe(sha256(body));
    expect(await requestErrors()).toEqual([{ http_status: 200, error: `not understood: ${where}`, problem_code: null }]);
  });

  it('a list asked with refusableItems: handed back with the strings located, tried once, archived partial as served', async () => {
    const body = '{"data":[{"slug":"a"},{"slug":"b","displayName":"x\\u0000y","symbol":"\\ud83d"}],"meta":{}}';
    fx.sim.script('/api/v1/tokens', [{ status: 200, body }]);
    const { upstream, recorder } = setup();
    const res = await upstream.get({ route: 'app.tokens', runId: RUN_ID, refusableItems: true });
    expect(res.unholdable?.map((u) => [u.path, u.what])).toEqual([
      ['data[1].displayName', `holds U+0000, ${CANNOT}`],
      ['data[1].symbol', `holds an unpaired surrogate U+D83D, ${CANNOT}`],
    ]);
    expect(fx.sim.requests.map((r) => r.path)).toEqual(['/api/v1/tokens']);
    await recorder.flush();
    const [row, more] = await archived();
    expect(more).toBeUndefined();
    expect(row).toMatchObject({ path: '/api/v1/tokens', status: 'partial', sha256: res.sha256, body: null, body_text: body, body_bytes: null });
    expect(row!.served_sha256).toBe(sha256(body));
    expect(await requestErrors()).toEqual([{ http_status: 200, error: null, problem_code: null }]);
  });

  it('a body whose bytes are not UTF-8 but parse as JSON: refused, tried once, kept in body_bytes byte for byte', async () => {
    const served = Buffer.concat([Buffer.from('{"data":[{"slug":"c","displayName":"caf'), Buffer.from([0xe9]), Buffer.from('"}],"meta":{}}')]);
    next = { body: served };
    const { upstream, recorder } = setup(ownUrl);
    const err = await refusal(upstream);
    expect(err.message).toBe(`GET /api/v1/tokens: not understood: body is not valid UTF-8 (byte ${served.indexOf(0xe9)})`);
    expect(ownSeen).toHaveLength(1);

    await recorder.flush();
    const [row, more] = await archived();
    expect(more).toBeUndefined();
    expect(row).toMatchObject({ status: 'invalid', body: null, body_text: null });
    expect(Buffer.compare(row!.body_bytes!, served)).toBe(0);
    expect(row!.sha256).toBe(sha256(served));
    expect(row!.served_sha256).toBe(sha256(served));
  });

  it('a raw NUL byte (not JSON): the body is kept with its NUL, in body_bytes, never dropped or replaced', async () => {
    const served = Buffer.from('{"data":[{"slug":"d","displayName":"x\u0000y"}],"meta":{}}');
    next = { body: served };
    const { upstream, recorder } = setup(ownUrl);
    const err = await refusal(upstream);
    expect(err.message).toMatch(/^GET \/api\/v1\/tokens: invalid JSON in a 200 response: /);
    expect(clean(err.message)).toBe(true);

    await recorder.flush();
    const [row, more] = await archived();
    expect(more).toBeUndefined();
    expect(row).toMatchObject({ status: 'invalid', body: null, body_text: null });
    expect(Buffer.compare(row!.body_bytes!, served)).toBe(0);
    expect(row!.served_sha256).toBe(sha256(served));
    const errors = await requestErrors();
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((r) => r.error !== null && clean(r.error) && r.error.includes('\\u0000'))).toBe(true);
  });

  it('a problem code holding U+0000 is recorded readable', async () => {
    fx.sim.script('/api/v1/tokens/aurora', [{ status: 400, code: 'bad\u0000code' }]);
    const { upstream, recorder } = setup();
    await expect(upstream.get({ route: 'app.token', params: { slug: 'aurora' } })).rejects.toThrow();
    await recorder.flush();
    const [req] = await requestErrors();
    expect(req).toMatchObject({ http_status: 400, problem_code: 'bad\\u0000code' });
  });

  it('a refused body a job keeps: invalid: and the hash of the bytes served, text when text holds it, else bytes', async () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0x00]), Buffer.from('"}')]);
    const base = { source: 'app' as const, runId: RUN_ID, httpStatus: 200, contentType: 'application/json' };
    await keepInvalidBody(fx.warehouse, { ...base, path: '/api/v1/x', text: new TextDecoder().decode(bytes), bytes });
    await keepInvalidBody(fx.warehouse, { ...base, path: '/api/v1/y', text: 'nul\u0000here' });
    await keepInvalidBody(fx.warehouse, { ...base, path: '/api/v1/z', text: '{"a":"é"}' });
    const rows = await archived();
    expect(rows.map((r) => [r.path, r.sha256, r.body_text, r.body_bytes === null ? null : r.body_bytes.toString('hex')])).toEqual([
      ['/api/v1/x', `invalid:${sha256(bytes)}`, null, bytes.toString('hex')],
      ['/api/v1/y', `invalid:${sha256('nul\u0000here')}`, null, Buffer.from('nul\u0000here').toString('hex')],
      ['/api/v1/z', `invalid:${sha256('{"a":"é"}')}`, '{"a":"é"}', null],
    ]);
    expect(rows.every((r) => r.sha256 === `invalid:${r.served_sha256}`)).toBe(true);
  });
});

describe('a body the warehouse holds', () => {
  it('is kept as before: jsonb, no body_text, no body_bytes', async () => {
    const { upstream, recorder } = setup();
    const res = await upstream.get({ route: 'app.tokens', runId: RUN_ID });
    expect(res.raw).toBeUndefined();
    await recorder.flush();
    const [row, more] = await archived();
    expect(more).toBeUndefined();
    expect(row).toMatchObject({ path: '/api/v1/tokens', status: 'ok', body_text: null, body_bytes: null, sha256: res.sha256 });
    expect(row!.body).not.toBeNull();
  });

  it('a valid surrogate pair and an escaped \\u0000 as text are understood', async () => {
    const body = '{"data":[{"slug":"e","displayName":"smile \\ud83d\\ude00","note":"\\\\u0000 is text"}],"meta":{}}';
    fx.sim.script('/api/v1/tokens', [{ status: 200, body }]);
    const { upstream } = setup();
    const res = await upstream.get({ route: 'app.tokens' });
    expect((res.body as { data: { displayName: string }[] }).data[0]!.displayName).toBe('smile 😀');
  });

  it('a byte-order mark: read, and the body kept as jsonb', async () => {
    next = { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"data":[],"meta":{}}')]) };
    const { upstream, recorder } = setup(ownUrl);
    const res = await upstream.get({ route: 'app.tokens' });
    expect(res.body).toEqual({ data: [], meta: {} });
    expect(res.text.charCodeAt(0)).toBe(0xfeff);
    await recorder.flush();
    const [row] = await archived();
    expect(row).toMatchObject({ status: 'ok', body: { data: [], meta: {} }, body_bytes: null });
  });

  it('offers brotli and reads a brotli body', async () => {
    const text = '{"data":[{"slug":"brotli"}],"meta":{}}';
    next = { body: brotliCompressSync(Buffer.from(text)), headers: { 'content-encoding': 'br' } };
    const { upstream } = setup(ownUrl);
    const res = await upstream.get({ route: 'app.tokens' });
    expect(ownSeen[0]?.['accept-encoding']).toBe('br, gzip, deflate');
    expect(res.text).toBe(text);
    expect(res.body).toEqual({ data: [{ slug: 'brotli' }], meta: {} });
  });
});
