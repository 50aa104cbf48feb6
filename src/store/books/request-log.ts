// The request log and raw archive, the one writer of sync.requests and sync.raw_responses:
// every attempt goes to sync.requests, every 2xx body to sync.raw_responses (identical bodies
// once, by hash), and so does a body a job refused (keepInvalidBody). Rows are batched so that
// logging does not slow the sync, and a failed write is logged and dropped: recording must
// never fail the sync it describes. A body waits for the job that read it, which archives it
// in the transaction of its rows (`take`, `archiveBodies`), and is written here only when no
// job took it in time. What a record holds is the upstream client's (src/ports/recorder.ts).
//
// A body is kept exactly or not at all: as jsonb (a valid body), as text, or, where text cannot
// say it (a U+0000, bytes that are not UTF-8), as the bytes served (`body_bytes`); never with
// a character dropped or replaced. The other text columns are not data: a U+0000 or an
// unpaired surrogate in them (a problem code from upstream) is written as a visible escape.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { rawResponses, requests } from '../../schema/warehouse/sync.ts';
import type { Logger } from '../../lib/logger.ts';
import { bodyKey, type RawBody, type RequestRecord, type RequestRecorder, type ResponseRecord, type TakenBodies } from '../../ports/recorder.ts';
import { servedBodyHash } from '../../lib/hash.ts';
import { holdsExactly, visibleText } from '../../lib/pg-text.ts';
import type { Source } from '../../ports/sources.ts';
import type { Warehouse } from '../connection.ts';
import { SERVER_CLOCK, WarehouseClock } from '../warehouse-clock.ts';
import type { Executor } from '../write/table-shape.ts';

export interface WarehouseRecorderOptions {
  /** Pending rows that trigger a write. */
  batchRows?: number;
  /** Longest a row waits before it is written. */
  flushIntervalMs?: number;
  /** Pending body characters that trigger a write (and the most one statement carries). */
  batchBodyChars?: number;
  /**
   * How long a body waits for the job that read it to take it into its own write (`take`)
   * before the recorder writes it itself: a job's read is not interrupted by a write of its
   * bodies, and its rows commit with them. Request rows wait `flushIntervalMs` only.
   */
  bodyHoldMs?: number;
  /**
   * The process's reading of the warehouse's clock, whose offset places the times the client
   * measured (one of its own when not given). Its offset is read at most once a minute: the
   * times of requests sent within it are moved alike, so they keep the order and the gaps this
   * process measured (a reading per flush moved each batch by its own round trip's jitter, and
   * a request sent after a 503 had been read could be stored before it). A clock that steps is
   * still followed within a minute.
   */
  clock?: WarehouseClock;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

const int = (v: number | undefined | null): number | null => (v === undefined || v === null || !Number.isFinite(v) ? null : Math.min(INT4_MAX, Math.round(v)));
const uuidOrNull = (v: string | undefined): string | null => (v && UUID.test(v) ? v : null);
/** Text that is not data, readable and storable: U+0000 and unpaired surrogates as visible escapes. */
const pgText = visibleText;

/**
 * How a body is kept: `text` when Postgres text holds it exactly, else `bytes` (the bytes
 * served, or the UTF-8 of a text holding U+0000, which is those bytes).
 */
function bodyForm(text: string, bytes: Uint8Array | undefined): { text: string; bytes: null } | { text: null; bytes: Buffer } {
  if (bytes) return { text: null, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  if (holdsExactly(text)) return { text, bytes: null };
  // Only U+0000 can get here from the client (its text is decoded from UTF-8, no lone surrogates).
  return { text: null, bytes: Buffer.from(text, 'utf8') };
}

/** The JSON text jsonb reads: a byte-order mark is not part of the value. */
const jsonTextOf = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A body waiting in the recorder's batch, since a reading of the monotonic clock. */
interface Held {
  record: ResponseRecord;
  since: number;
}

export class WarehouseRecorder implements RequestRecorder {
  private pendingRequests: RequestRecord[] = [];
  private pendingResponses: Held[] = [];
  private pendingChars = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly batchRows: number;
  private readonly flushIntervalMs: number;
  private readonly batchBodyChars: number;
  private readonly bodyHoldMs: number;
  private readonly clock: WarehouseClock;

  constructor(
    private readonly warehouse: Pick<Warehouse, 'db'>,
    private readonly logger: Logger,
    options: WarehouseRecorderOptions = {},
  ) {
    this.batchRows = options.batchRows ?? 200;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.batchBodyChars = options.batchBodyChars ?? 4 * 1024 * 1024;
    this.bodyHoldMs = options.bodyHoldMs ?? 10_000;
    this.clock = options.clock ?? new WarehouseClock(warehouse.db);
  }

  request(r: RequestRecord): void {
    this.pendingRequests.push(r);
    this.scheduled();
  }

  response(r: ResponseRecord): void {
    this.hold([{ record: r, since: performance.now() }]);
  }

  /** Writes everything pending, held bodies included. */
  flush(): Promise<void> {
    return this.write(this.pendingResponses);
  }

  take(source: Source, bodies: readonly RawBody[]): TakenBodies {
    const want = new Set(bodies.filter((b) => b.sha256 !== '').map(bodyKey));
    const taken = this.pendingResponses.filter((h) => h.record.source === source && want.has(bodyKey(h.record)));
    if (taken.length > 0) {
      this.pendingResponses = this.pendingResponses.filter((h) => !taken.includes(h));
      for (const h of taken) this.pendingChars -= h.record.text.length;
    }
    return {
      records: taken.map((h) => ({ ...h.record, fetchedAt: this.clock.place(h.record.fetchedAt) })),
      written: this.writing,
      giveBack: () => this.hold(taken),
    };
  }

  async rawResponseIds(source: Source, bodies: readonly RawBody[]): Promise<Map<string, number>> {
    if (!bodies.some((b) => b.sha256 !== '')) return new Map();
    await this.flush();
    try {
      return await archivedIds(this.warehouse.db, source, bodies);
    } catch (err) {
      this.logger.warn({ err }, 'could not look up archived bodies; rows keep no link to them');
      return new Map();
    }
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private hold(bodies: readonly Held[]): void {
    for (const h of bodies) {
      this.pendingResponses.push(h);
      this.pendingChars += h.record.text.length;
    }
    if (bodies.length > 0) this.scheduled();
  }

  private scheduled(): void {
    // A full batch is written whole: a body waits for its job only while the batch has room.
    if (this.pendingRequests.length + this.pendingResponses.length >= this.batchRows || this.pendingChars >= this.batchBodyChars) {
      void this.flush();
      return;
    }
    this.arm(this.flushIntervalMs);
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushDue();
    }, ms);
    this.timer.unref();
  }

  /** Writes the request rows, and the bodies no job took within `bodyHoldMs`; waits again for the others. */
  private flushDue(): Promise<void> {
    const now = performance.now();
    const due = this.pendingResponses.filter((h) => now - h.since >= this.bodyHoldMs);
    const written = this.write(due);
    const oldest = this.pendingResponses.reduce((min, h) => Math.min(min, h.since), Infinity);
    if (oldest !== Infinity) this.arm(Math.max(this.flushIntervalMs, oldest + this.bodyHoldMs - now));
    return written;
  }

  /** Writes every pending request row and `bodies` of the pending ones, after the writes before. */
  private write(bodies: readonly Held[]): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const reqs = this.pendingRequests;
    const resps = bodies.map((h) => h.record);
    this.pendingRequests = [];
    if (bodies.length > 0) {
      this.pendingResponses = bodies === this.pendingResponses ? [] : this.pendingResponses.filter((h) => !bodies.includes(h));
      for (const h of bodies) this.pendingChars -= h.record.text.length;
    }
    if (reqs.length === 0 && resps.length === 0) return this.writing;
    // One write at a time, in order; a failure is contained in writeBatch().
    this.writing = this.writing.then(() => this.writeBatch(reqs, resps));
    return this.writing;
  }

  private async writeBatch(reqs: RequestRecord[], resps: ResponseRecord[]): Promise<void> {
    // On the warehouse's clock, as every time in the warehouse (src/store/warehouse-clock.ts).
    let offsetMs = 0;
    if (!(await this.guard('request and response rows', async () => (offsetMs = await this.clock.offset())))) return;
    if (reqs.length > 0) {
      await this.guard(`${reqs.length} request rows`, () => this.insertRequests(reqs, offsetMs));
    }
    const placed = dedupe(resps).map((r) => ({ ...r, fetchedAt: this.clock.place(r.fetchedAt, offsetMs), lastSeenAt: this.clock.place(r.lastSeenAt, offsetMs) }));
    const db = this.warehouse.db;
    for (const chunk of chunkByChars(placed, this.batchBodyChars)) {
      if (await this.guard(null, () => insertBodies(db, chunk))) continue;
      // One bad row (a body Postgres' jsonb refuses, say) must not take the batch with it.
      for (const [i, r] of chunk.entries()) {
        if (await this.guard(null, () => insertBodies(db, [r]))) continue;
        if (await this.guard(`raw response of ${r.path}`, () => insertBodies(db, [r], true))) continue;
        // Not even as text: the warehouse itself is failing; do not hammer it row by row.
        if (i + 1 < chunk.length) this.logger.warn({ dropped: chunk.length - i - 1 }, 'could not record raw responses; dropped');
        break;
      }
    }
  }

  private async guard(what: string | null, fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      if (what) this.logger.warn({ err }, `could not record ${what}; dropped`);
      return false;
    }
  }

  private async insertRequests(rows: RequestRecord[], offsetMs: number): Promise<void> {
    await this.warehouse.db.insert(requests).values(
      rows.map((r) => ({
        runId: uuidOrNull(r.runId),
        source: r.source,
        bucket: r.bucket,
        method: 'GET',
        path: pgText(r.path),
        httpStatus: r.httpStatus,
        attempt: r.attempt,
        startedAt: this.clock.place(r.startedAt, offsetMs),
        durationMs: int(r.durationMs) ?? 0,
        bytes: int(r.bytes),
        rateLimitRemaining: int(r.rateLimitRemaining),
        rateLimitLimit: int(r.rateLimitLimit),
        retryAfterMs: int(r.retryAfterMs),
        problemCode: r.problemCode ? pgText(r.problemCode) : null,
        requestId: r.requestId ? pgText(r.requestId) : null,
        error: r.error ? pgText(r.error) : null,
      })),
    );
  }
}

type PendingResponse = ResponseRecord & { lastSeenAt: Date };

/**
 * Bodies as archived (`fetchedAt` and `lastSeenAt` on the warehouse's clock already): each kept
 * once per source, path and hash, seen again only marked seen. `asText`: even a valid JSON body
 * as text (when jsonb refuses it). Returns their ids.
 */
async function insertBodies(db: Pick<Executor, 'insert'>, rows: PendingResponse[], asText = false): Promise<{ id: number; path: string; sha256: string }[]> {
  if (rows.length === 0) return [];
  return db
    .insert(rawResponses)
    .values(
      rows.map((r) => {
        const form = bodyForm(r.text, r.bytes);
        // jsonb refuses \u0000 (and an unpaired surrogate: then the row is written again asText).
        const json = r.status === 'ok' && !asText && form.text !== null && !r.text.includes('\\u0000');
        return {
          runId: uuidOrNull(r.runId),
          source: r.source,
          path: pgText(r.path),
          fetchedAt: r.fetchedAt,
          lastSeenAt: r.lastSeenAt,
          httpStatus: r.httpStatus,
          contentType: r.contentType ? pgText(r.contentType) : null,
          sha256: r.sha256,
          // The text as received is valid JSON with its numbers exactly as upstream wrote them.
          body: json ? sql`${jsonTextOf(r.text)}::jsonb` : null,
          bodyText: json ? null : form.text,
          bodyBytes: json ? null : form.bytes,
          status: r.status,
        };
      }),
    )
    .onConflictDoUpdate({
      target: [rawResponses.source, rawResponses.path, rawResponses.sha256],
      set: { lastSeenAt: sql`greatest(${rawResponses.lastSeenAt}, excluded."last_seen_at")` },
    })
    .returning({ id: rawResponses.id, path: rawResponses.path, sha256: rawResponses.sha256 });
}

/** The ids of the bodies of `source` the raw responses hold, by `bodyKey`. */
async function archivedIds(db: Pick<Executor, 'select'>, source: Source, bodies: readonly RawBody[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const wanted = bodies.filter((b) => b.sha256 !== '');
  if (wanted.length === 0) return out;
  const want = new Set(wanted.map(bodyKey));
  const rows = await db
    .select({ id: rawResponses.id, path: rawResponses.path, sha256: rawResponses.sha256 })
    .from(rawResponses)
    .where(and(eq(rawResponses.source, source), inArray(rawResponses.path, [...new Set(wanted.map((b) => pgText(b.path)))]), inArray(rawResponses.sha256, [...new Set(wanted.map((b) => b.sha256))])));
  for (const r of rows) if (want.has(bodyKey(r))) out.set(bodyKey(r), r.id);
  return out;
}

/**
 * A job's bodies archived in its own transaction (`tx`): those it took from the recorder
 * written there (each in a savepoint: one body jsonb refuses is written again as text, and one
 * that cannot be written at all has no id), the others looked up. Returns the ids by `bodyKey`;
 * a body without one was never archived (the caller refuses to write rows without it).
 */
export async function archiveBodies(tx: Executor, source: Source, taken: readonly ResponseRecord[], wanted: readonly RawBody[], logger: Logger): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const rows = dedupe([...taken]);
  const insert = (batch: PendingResponse[], asText = false) => tx.transaction((sp) => insertBodies(sp as unknown as Executor, batch, asText));
  const kept = rows.length === 0 ? [] : await insert(rows).catch(async () => {
    const one: { id: number; path: string; sha256: string }[] = [];
    for (const r of rows) {
      const got = await insert([r]).catch(() => insert([r], true)).catch((err: unknown) => (logger.warn({ err, path: r.path }, 'could not archive a body'), []));
      one.push(...got);
    }
    return one;
  });
  for (const r of kept) out.set(bodyKey(r), r.id);
  const rest = wanted.filter((b) => b.sha256 !== '' && !out.has(bodyKey(b)));
  for (const [k, id] of await archivedIds(tx, source, rest)) out.set(k, id);
  return out;
}

/** Identical bodies of one path once per statement (a statement may not update a row twice). */
function dedupe(rows: ResponseRecord[]): PendingResponse[] {
  const byKey = new Map<string, PendingResponse>();
  for (const r of rows) {
    const key = `${r.source}\u0000${r.path}\u0000${r.sha256}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...r, lastSeenAt: r.fetchedAt });
    else if (r.fetchedAt > seen.lastSeenAt) seen.lastSeenAt = r.fetchedAt;
  }
  return [...byKey.values()];
}

function* chunkByChars(rows: PendingResponse[], maxChars: number): Generator<PendingResponse[]> {
  let chunk: PendingResponse[] = [];
  let chars = 0;
  for (const r of rows) {
    if (chunk.length > 0 && (chars + r.text.length > maxChars || chunk.length >= 500)) {
      yield chunk;
      chunk = [];
      chars = 0;
    }
    chunk.push(r);
    chars += r.text.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** A response a job read and refused: kept with its raw text, whatever its JSON said. */
export interface InvalidBody {
  source: Source;
  runId: string;
  path: string;
  httpStatus: number;
  contentType: string | null;
  text: string;
  /** The body as served, byte for byte, when `text` does not say it exactly (UpstreamResponse `raw`). */
  bytes?: Uint8Array | undefined;
}

/**
 * Keeps a refused body as `invalid` in its own hash space (the archive may hold the same bytes
 * as a valid body), stamped on the server's clock; seen again, it is only marked seen. Its
 * `sha256` is `invalid:` and the sha256 of the bytes served; the body is kept as text, or as
 * those bytes where text cannot hold it exactly.
 */
export async function keepInvalidBody(warehouse: Warehouse, b: InvalidBody): Promise<void> {
  const form = bodyForm(b.text, b.bytes);
  await warehouse.db
    .insert(rawResponses)
    .values({
      runId: uuidOrNull(b.runId),
      source: b.source,
      path: pgText(b.path),
      fetchedAt: SERVER_CLOCK,
      lastSeenAt: SERVER_CLOCK,
      httpStatus: b.httpStatus,
      contentType: b.contentType ? pgText(b.contentType) : null,
      sha256: `invalid:${servedBodyHash(b.text, b.bytes)}`,
      bodyText: form.text,
      bodyBytes: form.bytes,
      status: 'invalid',
    })
    .onConflictDoUpdate({ target: [rawResponses.source, rawResponses.path, rawResponses.sha256], set: { lastSeenAt: SERVER_CLOCK, runId: uuidOrNull(b.runId) } });
}
