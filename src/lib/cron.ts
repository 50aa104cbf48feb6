// A strict check of cron patterns, so a typo in TE_SCHEDULE_* fails at start with exit 2
// instead of when BullMQ first computes the next run. Accepts the common subset that
// BullMQ's cron parser understands: 5 fields (minute first) or 6 (second first), each a list
// of `*`, `?` (day fields), numbers, ranges, names and `/step`.

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** `?` is allowed (day of month, day of week). */
  any?: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const SECOND: Field = { name: 'second', min: 0, max: 59 };
const FIVE: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31, any: true },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: DAYS, any: true },
];

/** Undefined when the pattern is valid, else what is wrong with it. */
export function cronProblem(pattern: string): string | undefined {
  const parts = pattern.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) return `must have 5 fields (minute hour day month weekday) or 6 (with seconds first), not ${parts.length}`;
  const fields = parts.length === 6 ? [SECOND, ...FIVE] : FIVE;
  for (let i = 0; i < parts.length; i++) {
    const problem = fieldProblem(parts[i]!, fields[i]!);
    if (problem) return `${fields[i]!.name} ${JSON.stringify(parts[i])}: ${problem}`;
  }
  return undefined;
}

function fieldProblem(text: string, f: Field): string | undefined {
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (extra !== undefined) return 'more than one "/"';
    if (step !== undefined && !/^[1-9][0-9]*$/.test(step)) return 'a step must be a positive whole number';
    if (range === '*' || (range === '?' && f.any && step === undefined)) continue;
    const bounds = (range ?? '').split('-');
    if (bounds.length > 2) return `"${range}" is not a value or a range`;
    const values = bounds.map((b) => valueOf(b, f));
    if (values.some((v) => v === undefined)) return `values must be ${f.min}-${f.max}${f.names ? ` or ${f.names[0]}-${f.names.at(-1)}` : ''}`;
    if (values.length === 2 && values[0]! > values[1]!) return `range "${range}" runs backwards`;
  }
  return undefined;
}

function valueOf(text: string, f: Field): number | undefined {
  if (/^[0-9]{1,2}$/.test(text)) {
    const n = Number(text);
    return n >= f.min && n <= f.max ? n : undefined;
  }
  const i = f.names?.indexOf(text.toUpperCase()) ?? -1;
  return i < 0 ? undefined : f.name === 'month' ? i + 1 : i;
}
