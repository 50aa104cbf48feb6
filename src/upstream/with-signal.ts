import type { Upstream } from './request.ts';

/** The upstream with every request aborted by `signal` too (a shutdown, a lost lock, an interrupt). */
export function withSignal(upstream: Upstream, signal: AbortSignal): Upstream {
  return { ...upstream, get: (req) => upstream.get({ ...req, signal: req.signal ? AbortSignal.any([req.signal, signal]) : signal }) };
}
