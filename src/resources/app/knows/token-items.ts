// The app's token list as stored, delisted tokens left out: each listed item as it was sent, for
// an unchanged list to plan its tokens again.
import { isNull } from 'drizzle-orm';
import { tokens } from '../../../schema/warehouse/app.ts';
import { question } from '../../../engine/kit/knows.ts';

export const storedTokenItems = question('storedTokenItems', async (w): Promise<unknown[]> => {
  const rows = await w.db.select({ payload: tokens.payload }).from(tokens).where(isNull(tokens.delistedAt)).orderBy(tokens.slug);
  return rows.map((r) => r.payload);
});
