// Writing a reply, with the body faults that only make sense on a 200: a stall between the
// headers and the body, a cut body, garbage, a padded body, a body that never ends. The sha256
// of the bytes written as the body goes to `onBody` (RecordedRequest.bodySha256).
import { createHash, type Hash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { INVALID_JSON_BODY, schemaViolationBody, type FaultPlan } from './faults.ts';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface SendControl {
  sleep(ms: number): Promise<void>;
  isClosed(): boolean;
  /** called once with the status actually sent */
  onStatus(status: number): void;
  /** called with the sha256 hex of the bytes written as the body: as they are written, and once more if more follow */
  onBody?(sha256: string): void;
}

/** The sha256 of the body as far as it was written, told to `ctl` at each step. */
class BodyHash {
  private readonly hash: Hash = createHash('sha256');
  constructor(private readonly ctl: SendControl) {}
  add(chunk: Buffer): void {
    this.hash.update(chunk);
  }
  /** tells what was written so far (a copy: more may follow) */
  tell(): void {
    this.ctl.onBody?.(this.hash.copy().digest('hex'));
  }
}

/** Statuses that never carry a body (RFC 9110): no Content-Length, nothing written. */
const BODILESS = new Set([204, 304]);

const CHUNK = 64 * 1024;

export async function sendReply(res: ServerResponse, reply: Reply, plan: FaultPlan | null, ctl: SendControl, servedAt: string): Promise<void> {
  const faulty = plan !== null && reply.status === 200 ? plan : null;
  const headers = { ...reply.headers };
  ctl.onStatus(reply.status);
  const hash = new BodyHash(ctl);
  if (faulty?.endless) return streamEndless(res, reply.status, headers, ctl, hash);
  if (BODILESS.has(reply.status)) {
    hash.tell();
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }

  let body = reply.body;
  if (faulty?.invalidJson) body = INVALID_JSON_BODY;
  else if (faulty?.schemaViolation) body = schemaViolationBody(servedAt);
  let buf = Buffer.from(body, 'utf8');
  let padding = faulty ? Math.max(0, faulty.hugeBodyBytes - buf.length) : 0;
  const cut = faulty?.truncate ?? null;
  if (cut !== null) {
    buf = buf.subarray(0, Math.max(1, Math.floor(buf.length / 2)));
    padding = 0;
  }
  // 'chunked' leaves Content-Length out: Node then frames the body in chunks
  if (cut !== 'chunked') headers['Content-Length'] = String(buf.length + padding);
  res.writeHead(reply.status, headers);

  if (faulty && faulty.stallMs > 0) {
    res.flushHeaders();
    hash.tell();
    await ctl.sleep(faulty.stallMs);
    if (res.destroyed || ctl.isClosed()) return;
  }
  if (cut === 'chunked') {
    // half a body, then the connection dies before the terminating chunk
    hash.add(buf);
    hash.tell();
    res.write(buf, () => res.socket?.destroy());
    return;
  }
  if (padding === 0) {
    hash.add(buf);
    hash.tell();
    res.end(buf);
    return;
  }
  // JSON allows trailing whitespace: a padded body stays valid, only big
  if (!(await write(res, buf, hash))) return;
  const spaces = Buffer.alloc(CHUNK, 0x20);
  while (padding > 0 && !ctl.isClosed()) {
    const n = Math.min(padding, CHUNK);
    if (!(await write(res, n === CHUNK ? spaces : spaces.subarray(0, n), hash))) return;
    padding -= n;
  }
  hash.tell();
  res.end();
}

/** a JSON array that never closes, until the client hangs up or the simulator stops */
async function streamEndless(res: ServerResponse, status: number, headers: Record<string, string>, ctl: SendControl, hash: BodyHash): Promise<void> {
  res.writeHead(status, headers);
  const item = Buffer.from(`{"pad":"${'x'.repeat(1000)}"},`.repeat(64));
  if (!(await write(res, Buffer.from('{"data":['), hash))) return;
  while (!ctl.isClosed()) {
    if (!(await write(res, item, hash))) return;
    // let the event loop breathe: other requests (and the client's abort) must get through
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.destroy();
}

/** resolves true once the chunk is accepted (after 'drain' if needed), false if the response closed; `hash` is told of it */
function write(res: ServerResponse, chunk: Buffer, hash: BodyHash): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  hash.add(chunk);
  hash.tell();
  if (res.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
