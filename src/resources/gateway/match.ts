// Pure: which token a gateway screener row is about. Rows name it by `slug`, by `token.slug`
// (or a bare `token` string), or only by `symbol`, which is matched through the token list:
// listed tokens first, exact before case-insensitive; two candidates are ambiguous, never guessed.

export interface KnownToken {
  slug: string;
  symbol: string | null;
  delisted: boolean;
}

export type TokenMatch =
  | { slug: string; by: 'slug' | 'token.slug' | 'token' | 'symbol' }
  | { slug: null; reason: 'no-token' | 'unknown-symbol' | 'ambiguous-symbol'; symbol: string | null };

export interface RowNaming {
  slug?: unknown;
  token?: unknown;
  symbol?: unknown;
}

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

export function matchRowToken(row: RowNaming, known: readonly KnownToken[]): TokenMatch {
  if (nonEmpty(row.slug)) return { slug: row.slug, by: 'slug' };
  if (nonEmpty(row.token)) return { slug: row.token, by: 'token' };
  const t = row.token;
  if (t && typeof t === 'object' && !Array.isArray(t) && nonEmpty((t as { slug?: unknown }).slug)) return { slug: (t as { slug: string }).slug, by: 'token.slug' };
  const nested = t && typeof t === 'object' ? (t as { symbol?: unknown }).symbol : undefined;
  const symbol = nonEmpty(row.symbol) ? row.symbol : nonEmpty(nested) ? nested : null;
  if (symbol === null) return { slug: null, reason: 'no-token', symbol: null };
  return matchSymbol(symbol, known);
}

export function matchSymbol(symbol: string, known: readonly KnownToken[]): TokenMatch {
  const s = symbol.trim();
  const exact = (k: KnownToken) => k.symbol !== null && k.symbol.trim() === s;
  const folded = (k: KnownToken) => k.symbol !== null && k.symbol.trim().toLowerCase() === s.toLowerCase();
  const listed = known.filter((k) => !k.delisted);
  for (const [pool, test] of [
    [listed, exact],
    [listed, folded],
    [known, exact],
    [known, folded],
  ] as const) {
    const hits = new Set(pool.filter(test).map((k) => k.slug));
    if (hits.size === 1) return { slug: [...hits][0]!, by: 'symbol' };
    if (hits.size > 1) return { slug: null, reason: 'ambiguous-symbol', symbol };
  }
  return { slug: null, reason: 'unknown-symbol', symbol };
}
