// UTC calendar days as 'YYYY-MM-DD' strings. Data dates never depend on the wall clock, so a
// seed serves the same bytes today and next year.

/** The last history day at epoch 0; each later epoch adds one day. */
export const ANCHOR_DATE = '2026-06-30';

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function dateToMs(date: string): number {
  return Date.parse(`${date}T00:00:00.000Z`);
}

export function msToDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return msToDate(dateToMs(date) + days * DAY_MS);
}

/** a real calendar date in the strict YYYY-MM-DD form */
export function isIsoDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  return msToDate(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) === s;
}

export function dayList(first: string, count: number): string[] {
  const start = dateToMs(first);
  const out: string[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = msToDate(start + i * DAY_MS);
  return out;
}
