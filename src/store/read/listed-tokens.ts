// Which of the slugs a command was asked for are listed by the sources' token lists now: a
// `--token` that names no listed token walks nothing, and the command says so.
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';

/** A listed token, as a person might have named it instead of by slug. */
export interface ListedToken {
  slug: string;
  name: string | null;
  symbol: string | null;
}

const LISTS: Readonly<Record<string, ReturnType<typeof sql>>> = {
  app: sql`select slug, display_name as name, symbol from app.tokens where delisted_at is null`,
  gateway: sql`select slug, name, symbol from gateway.tokens where delisted_at is null`,
};

/** The tokens the given sources' lists hold now (delisted ones left out). */
export async function listedTokens(w: Warehouse, sources: readonly string[]): Promise<ListedToken[]> {
  const out: ListedToken[] = [];
  for (const s of sources) if (LISTS[s]) out.push(...(await w.query<ListedToken>(LISTS[s]!)));
  return out;
}

/**
 * Pure: the slugs asked for that no listed token has, each with the listed slug it may have
 * meant (the same slug in other case, or a token of that name or symbol).
 */
export function unknownSlugs(asked: readonly string[], listed: readonly ListedToken[]): { slug: string; meant?: string }[] {
  const slugs = new Set(listed.map((t) => t.slug));
  const fold = (s: string | null) => (s ?? '').trim().toLowerCase();
  return [...new Set(asked)]
    .filter((slug) => !slugs.has(slug))
    .map((slug) => {
      const meant = listed.find((t) => fold(t.slug) === fold(slug)) ?? listed.find((t) => fold(t.name) === fold(slug) || fold(t.symbol) === fold(slug));
      return meant ? { slug, meant: meant.slug } : { slug };
    });
}
