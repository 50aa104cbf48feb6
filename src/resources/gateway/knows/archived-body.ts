// A body as archived in the raw responses, by its source, path and hash (undefined: not archived,
// or kept as text): the gateway contract's previous copy, where its state kept no fingerprint.
import { and, eq } from 'drizzle-orm';
import { rawResponses } from '../../../schema/warehouse/sync.ts';
import type { Source } from '../../../ports/sources.ts';
import { question } from '../../../engine/kit/knows.ts';

export const archivedBody = question('archivedBody', async (w, body: { source: Source; path: string; sha256: string }): Promise<unknown> => {
  const rows = await w.db
    .select({ body: rawResponses.body })
    .from(rawResponses)
    .where(and(eq(rawResponses.source, body.source), eq(rawResponses.path, body.path), eq(rawResponses.sha256, body.sha256)))
    .limit(1);
  return rows[0]?.body ?? undefined;
});
