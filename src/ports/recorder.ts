// What the client tells a recorder of each attempt and each 2xx body: the records, the
// interface, and recorders that keep nothing or keep them in memory. The one that writes them
// to the warehouse (sync.requests, sync.raw_responses) is the store's:
// src/store/books/request-log.ts.
import type { Bucket, Source } from './sources.ts';

/** How `sync.requests.error` begins for a request cut short because its walk stopped. */
export const STOPPED_REQUEST = 'stopped: ';

export interface RequestRecord {
  runId?: string | undefined;
  source: Source;
  bucket: Bucket;
  /** Path and query, never the host or a key. */
  path: string;
  /** Null when no response arrived. */
  httpStatus: number | null;
  /** 1-based, counting every try of the request including 429 re-tries. */
  attempt: number;
  startedAt: Date;
  durationMs: number;
  bytes?: number | undefined;
  rateLimitRemaining?: number | undefined;
  rateLimitLimit?: number | undefined;
  retryAfterMs?: number | undefined;
  problemCode?: string | undefined;
  requestId?: string | undefined;
  error?: string | undefined;
}

export interface ResponseRecord {
  runId?: string | undefined;
  source: Source;
  path: string;
  fetchedAt: Date;
  httpStatus: number;
  contentType?: string | undefined;
  sha256: string;
  /** The body as received, as text (exactly the body unless `bytes` is given). */
  text: string;
  /**
   * The body as served, byte for byte, when `text` does not say it exactly (bytes that are not
   * UTF-8). Absent: the UTF-8 of `text` is the body.
   */
  bytes?: Uint8Array | undefined;
  /**
   * `ok`: valid JSON, stored as jsonb; `partial`: a list's body holding strings Postgres cannot
   * store exactly (the items holding them refused alone), kept as text, or as bytes where text
   * cannot hold it; `invalid`: kept so too.
   */
  status: 'ok' | 'partial' | 'invalid';
}

export interface RequestRecorder {
  request(r: RequestRecord): void;
  response(r: ResponseRecord): void;
  /** Writes what is pending; never rejects. */
  flush(): Promise<void>;
  /**
   * The sync.raw_responses ids of the bodies kept there, by `path` and `sha256` (keyed by
   * `bodyKey`), once what is pending is written. A body not kept has no id; never rejects.
   */
  rawResponseIds(source: Source, bodies: readonly RawBody[]): Promise<Map<string, number>>;
  /**
   * Takes the pending records of these bodies (of `source`) out of the recorder's next batch,
   * for a job to archive inside the transaction that writes the rows read from them: the rows
   * and their bodies commit together, and the job's read is never held by a flush. Bodies
   * already written, or being written, are not taken (`written`: done when those writes are).
   */
  take(source: Source, bodies: readonly RawBody[]): TakenBodies;
  close(): Promise<void>;
}

/** Bodies a job took out of a recorder's batch, to archive in its own transaction. */
export interface TakenBodies {
  /** Their records, their times placed on the warehouse's clock. */
  readonly records: readonly ResponseRecord[];
  /** Resolves when the recorder's writes under way when they were taken are done. */
  readonly written: Promise<void>;
  /** Hands them back to the recorder's next batch: the transaction that took them did not commit. */
  giveBack(): void;
}

/** Nothing taken: a recorder that keeps no bodies pending. */
export const NOTHING_TAKEN: TakenBodies = { records: [], written: Promise.resolve(), giveBack: () => {} };

/** A raw response's body, as sync.raw_responses keys it (with its source). */
export interface RawBody {
  path: string;
  sha256: string;
}

export const bodyKey = (b: RawBody): string => `${b.path}\u0000${b.sha256}`;

export class NullRecorder implements RequestRecorder {
  request(_r: RequestRecord): void {}
  response(_r: ResponseRecord): void {}
  async flush(): Promise<void> {}
  async rawResponseIds(): Promise<Map<string, number>> {
    return new Map();
  }
  take(): TakenBodies {
    return NOTHING_TAKEN;
  }
  async close(): Promise<void> {}
}

/** Keeps records in memory: for tests and for callers that want to look at what happened. */
export class MemoryRecorder extends NullRecorder {
  readonly requests: RequestRecord[] = [];
  readonly responses: ResponseRecord[] = [];
  override request(r: RequestRecord): void {
    this.requests.push(r);
  }
  override response(r: ResponseRecord): void {
    this.responses.push(r);
  }
}

/** `inner`, telling `onRequest` of each attempt first (live progress, metrics). */
export function tellingRequests(inner: RequestRecorder, onRequest: (r: RequestRecord) => void): RequestRecorder {
  return {
    request: (r) => {
      onRequest(r);
      inner.request(r);
    },
    response: (r) => inner.response(r),
    flush: () => inner.flush(),
    rawResponseIds: (source, bodies) => inner.rawResponseIds(source, bodies),
    take: (source, bodies) => inner.take(source, bodies),
    close: () => inner.close(),
  };
}
