// Fault injection. Whether a request is hit depends only on the seed and the request's
// sequence number, so a failing test replays the same faults on the same requests.
import { rngFor } from './random.ts';
import type { SimFaults } from './types.ts';

export const NO_FAULTS: SimFaults = {
  errorRate: 0,
  unavailableRate: 0,
  truncateRate: 0,
  invalidJsonRate: 0,
  schemaViolationRate: 0,
  resetRate: 0,
  stallMs: 0,
  dateSkewMs: 0,
  hugeBodyBytes: 0,
  endlessBody: false,
};

export function mergeFaults(current: SimFaults, patch: Partial<SimFaults>): SimFaults {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<SimFaults>;
  return { ...current, ...defined };
}

export interface FaultPlan {
  /** destroy the socket without answering */
  reset: boolean;
  /** 500 internal error instead of the answer */
  error: boolean;
  /** 503 unavailable instead of the answer */
  unavailable: boolean;
  /** the remaining ones only touch 200 answers */
  truncate: 'content-length' | 'chunked' | null;
  invalidJson: boolean;
  schemaViolation: boolean;
  stallMs: number;
  hugeBodyBytes: number;
  endless: boolean;
}

export function planFaults(f: SimFaults, seed: number, seq: number, path: string): FaultPlan {
  const applies = f.pathFilter === undefined || f.pathFilter === '' || path.includes(f.pathFilter);
  // one draw per fault, always all of them: rates stay independent of each other
  const rng = rngFor(seed, 'faults', seq);
  const draws = [rng.next(), rng.next(), rng.next(), rng.next(), rng.next(), rng.next()] as const;
  const hit = (i: 0 | 1 | 2 | 3 | 4 | 5, rate: number) => applies && rate > 0 && draws[i] < rate;
  return {
    reset: hit(0, f.resetRate),
    error: hit(1, f.errorRate),
    unavailable: hit(2, f.unavailableRate),
    truncate: hit(3, f.truncateRate) ? (seq % 2 === 0 ? 'content-length' : 'chunked') : null,
    invalidJson: hit(4, f.invalidJsonRate),
    schemaViolation: hit(5, f.schemaViolationRate),
    stallMs: applies ? f.stallMs : 0,
    hugeBodyBytes: applies ? f.hugeBodyBytes : 0,
    endless: applies && f.endlessBody,
  };
}

export const INVALID_JSON_BODY = '<!DOCTYPE html><html><head><title>502</title></head><body>upstream hiccup {"data": [</body></html>';

/** well-formed JSON that breaks the envelope's shape */
export function schemaViolationBody(servedAt: string): string {
  return JSON.stringify({ data: 'this is not the resource you asked for', meta: { servedAt, count: 'many' } });
}
