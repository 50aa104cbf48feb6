// The stream keys known for a token: its snapshot's streams and its screener row's. A history
// whose streams cannot be told apart is read against them.
import { eq, sql } from 'drizzle-orm';
import { tokenStreams } from '../../../schema/warehouse/app.ts';
import { question } from '../../../engine/kit/knows.ts';

export const knownStreamKeys = question('knownStreamKeys', async (w, slug: string) => {
  const fromSnapshot = await w.db.select({ key: tokenStreams.streamKey }).from(tokenStreams).where(eq(tokenStreams.tokenSlug, slug));
  const fromScreener = await w.query<{ key: string | null }>(
    sql`select s->>'key' as key from app.screener_rows r, jsonb_array_elements(case when jsonb_typeof(r.payload->'streams') = 'array' then r.payload->'streams' else '[]'::jsonb end) s where r.token_slug = ${slug}`,
  );
  return new Set([...fromSnapshot.map((r) => r.key), ...fromScreener.map((r) => r.key).filter((k): k is string => typeof k === 'string' && k !== '')]);
});
