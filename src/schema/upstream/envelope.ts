// The `{ data, meta }` envelope both APIs share. Lenient: unknown fields are kept.
import { z } from 'zod';
import { readInt, readText, readTime } from './values.ts';

export const envelope = z.looseObject({
  data: z.unknown(),
  meta: z.looseObject({}).optional().nullable(),
});

export interface EnvelopeMeta {
  servedAt: Date | null;
  asOf: Date | null;
  count: number | undefined;
  raw: Record<string, unknown>;
}

export function readMeta(meta: Record<string, unknown> | null | undefined): EnvelopeMeta {
  const m = meta ?? {};
  return { servedAt: readTime(m.servedAt), asOf: readTime(m.asOf), count: readInt(m.count), raw: m };
}

/** A list payload: an array, or an object holding one under a usual name. */
export function readList(data: unknown, names: readonly string[] = ['items', 'charts', 'data', 'results']): unknown[] | undefined {
  if (Array.isArray(data)) return data;
  if (data && typeof data === 'object') {
    for (const n of names) {
      const v = (data as Record<string, unknown>)[n];
      if (Array.isArray(v)) return v;
    }
  }
  return undefined;
}

export { readText };
