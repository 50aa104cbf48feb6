// Pure: the instants and days `tesync export` is given, read as the contract says. An instant
// is UTC unless it carries an offset, whatever the process's time zone, and is kept to the
// microsecond (Postgres' precision); a day must exist in the calendar. Only what is understood
// is taken: words Postgres would also accept (`epoch`, `infinity`, `now`) are refused, as is a
// finer fraction than a microsecond, which Postgres would round.

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** Whether year-month-day is a day of the (proleptic Gregorian) calendar. */
function dayExists(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
  return d <= days;
}

/** `text` as a day (YYYY-MM-DD), or what is wrong with it. */
export function readDay(text: string): { day: string } | { error: string } {
  const m = DAY.exec(text);
  if (!m) return { error: 'a day as YYYY-MM-DD' };
  if (!dayExists(Number(m[1]), Number(m[2]), Number(m[3]))) return { error: `${text} is not a day of the calendar` };
  return { day: text };
}

/**
 * `text` as an instant, in the form tesync writes instants (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC,
 * six fraction digits), or what is wrong with it. A day alone is its midnight, UTC.
 */
export function readInstant(text: string): { iso: string } | { error: string } {
  const t = text.trim();
  if (/^[+-]?(epoch|infinity|now|today|tomorrow|yesterday|allballs)$/i.test(t)) {
    return { error: `"${t}" is a word, not an instant: give a date and time, e.g. 2026-11-28T12:00:00Z` };
  }
  const m = INSTANT.exec(t);
  if (!m) return { error: 'not an instant: give a date and time, UTC unless an offset is given, e.g. 2026-11-28T12:00:00Z or 2026-11-28 21:00:00+09:00' };
  const [y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m.slice(1) as string[];
  if (!dayExists(Number(y), Number(mo), Number(d))) return { error: `${y}-${mo}-${d} is not a day of the calendar` };
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return { error: `${h}:${mi}:${s} is not a time of day` };
  if (frac.length > 6) return { error: `${t} is finer than a microsecond, the finest instant the warehouse keeps` };
  let offsetMinutes = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const [oh, om] = [Number(z[2]), Number(z[3] ?? '0')];
    if (oh > 15 || om > 59) return { error: `${zone} is not an offset from UTC` };
    offsetMinutes = (z[1] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Whole seconds through Date (exact for these), the fraction carried beside as text.
  // (setUTCFullYear, not Date.UTC, which reads a year below 100 as 19xx.)
  const wall = new Date(0);
  wall.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  wall.setUTCHours(Number(h), Number(mi), Number(s), 0);
  const ms = wall.getTime() - offsetMinutes * 60_000;
  const at = new Date(ms);
  if (Number(y) < 1 || Number.isNaN(ms) || at.getUTCFullYear() > 9999 || at.getUTCFullYear() < 1) return { error: `${t} is outside the years 0001-9999` };
  const iso = `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1, 2)}-${pad(at.getUTCDate(), 2)}T${pad(at.getUTCHours(), 2)}:${pad(at.getUTCMinutes(), 2)}:${pad(at.getUTCSeconds(), 2)}.${frac.padEnd(6, '0')}Z`;
  return { iso };
}
