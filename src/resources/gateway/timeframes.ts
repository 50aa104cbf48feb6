// Which chart timeframes (and history periods) tesync mirrors. A chart is asked only for
// timeframes its catalog entry lists; a configured timeframe it does not list is replaced by
// the longest one it does list, and the replacement is recorded (gateway.charts and the chart
// job's resource state), so that no chart is left without points and nothing saying why.
// Points are stored under the timeframe actually fetched, never relabelled.

/** Days a timeframe spans: 7d < 30d < 90d < 180d < 365d = 1y < all. */
const SPAN: Readonly<Record<string, number>> = { '7d': 7, '30d': 30, '90d': 90, '180d': 180, '365d': 365, '1y': 365, all: Number.POSITIVE_INFINITY };

/**
 * Pure: the longest of the listed timeframes that tesync can ask for (`known`), or null when
 * none is. Of two as long (365d and 1y) the one first in `known` wins, so the choice does
 * not depend on the catalog's order.
 */
export function longestListed(listed: readonly string[], known: readonly string[]): string | null {
  let best: string | null = null;
  for (const k of known) {
    if (!listed.includes(k) || SPAN[k] === undefined) continue;
    if (best === null || SPAN[k]! > SPAN[best]!) best = k;
  }
  return best;
}

/** One fetch of a chart: the timeframe asked for, and the configured ones it serves. */
export interface TimeframeFetch {
  timeframe: string;
  /** The configured timeframes this fetch stands for, in configured order. */
  requested: string[];
  /** Those of `requested` the chart does not list (empty: no substitution). */
  substitutedFor: string[];
}

export interface TimeframeChoice {
  /** One per distinct timeframe to fetch, in configured order. */
  fetches: TimeframeFetch[];
  /** Configured timeframe the chart does not list → the one mirrored instead (null: it lists none tesync knows). */
  substitutions: Record<string, string | null>;
}

/**
 * Pure: what to fetch of a chart that lists `listed` (null: the catalog does not say, so every
 * configured timeframe is asked as is) when `configured` are wanted. Several configured
 * timeframes that come down to the same one are fetched once.
 */
export function chooseTimeframes(listed: readonly string[] | null, configured: readonly string[], known: readonly string[]): TimeframeChoice {
  const fetches = new Map<string, TimeframeFetch>();
  const substitutions: Record<string, string | null> = {};
  const add = (timeframe: string, requested: string, substituted: boolean) => {
    let f = fetches.get(timeframe);
    if (!f) fetches.set(timeframe, (f = { timeframe, requested: [], substitutedFor: [] }));
    if (!f.requested.includes(requested)) f.requested.push(requested);
    if (substituted && !f.substitutedFor.includes(requested)) f.substitutedFor.push(requested);
  };
  for (const c of configured) {
    if (listed === null || listed.includes(c)) {
      add(c, c, false);
      continue;
    }
    const instead = longestListed(listed, known);
    substitutions[c] = instead;
    if (instead !== null) add(instead, c, true);
  }
  return { fetches: [...fetches.values()], substitutions };
}

/** Pure: the timeframes a choice mirrors, in its order. */
export function mirroredTimeframes(choice: TimeframeChoice): string[] {
  return choice.fetches.map((f) => f.timeframe);
}
