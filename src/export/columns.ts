// Pure: how each Postgres column goes out to Parquet. Rows leave Postgres as text (COPY ...
// CSV), so no value passes through a JavaScript number; DuckDB casts the text to the column's
// Parquet type. A numeric is DECIMAL(38,s) with `s` the largest scale present, when every
// value fits 38 digits; otherwise (or when it holds NaN or infinity) it stays the text
// Postgres gave, and the manifest says so. Never a float.

/** A column as the warehouse describes it (`format_type`, its comment). */
export interface SourceColumn {
  name: string;
  type: string;
  comment: string | null;
}

/** What a numeric column holds, read by one aggregate in Postgres. */
export interface NumericStats {
  /** The largest scale of its finite values (null: none). */
  maxScale: number | null;
  /** The most digits left of the point of its finite values (0 for |v| < 1). */
  maxIntegerDigits: number | null;
  /** How many values are NaN or infinite. */
  special: number;
}

/** The widest decimal Parquet holds. */
export const MAX_DECIMAL_DIGITS = 38;

export interface ExportColumn {
  name: string;
  /** Postgres' type, as `format_type` names it. */
  sourceType: string;
  /** The SQL expression the column is read as text with (in COPY's SELECT). */
  read: string;
  /** DuckDB's expression that turns the text column `"name"` into the written value. */
  cast: string;
  /** The type written, as DuckDB names it. */
  type: string;
  comment: string | null;
  /** Numeric columns: the decimal's precision and scale, or `asString` when it does not fit; the most digits left of the point. */
  numeric?: { precision: number; scale: number; asString: boolean; integerDigits: number };
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Pure: whether a numeric column of these values fits DECIMAL(38,s), and at which scale. */
export function decimalFit(stats: NumericStats): { precision: number; scale: number; asString: boolean; integerDigits: number } {
  const scale = stats.maxScale ?? 0;
  const integerDigits = stats.maxIntegerDigits ?? 0;
  const asString = stats.special > 0 || integerDigits + scale > MAX_DECIMAL_DIGITS || scale > MAX_DECIMAL_DIGITS;
  return { precision: MAX_DECIMAL_DIGITS, scale: asString ? 0 : scale, asString, integerDigits };
}

/** The type a column was written in before, as the manifest keeps it. */
export interface WrittenType {
  sourceType: string;
  type: string;
  scale?: number;
  asString?: boolean;
}

/**
 * Pure: `c`, judged on the rows written now, in the type `before` (the days of the same archive
 * written earlier), when that type holds every value of `c` exactly: text holds any number; a
 * decimal of a larger scale holds a smaller one, as long as the digits still fit 38. Null when it
 * does not (then the whole archive is judged again, and its days written again if its type moved).
 */
export function inTypeWritten(c: ExportColumn, before: WrittenType | undefined): ExportColumn | null {
  if (!before || before.type === c.type) return c;
  if (!c.numeric || before.sourceType !== c.sourceType) return null;
  const id = quoteIdent(c.name);
  if (before.asString) return { ...c, cast: id, type: 'VARCHAR', numeric: { ...c.numeric, scale: 0, asString: true } };
  const scale = before.scale ?? 0;
  if (c.numeric.asString || c.numeric.scale > scale || c.numeric.integerDigits + scale > MAX_DECIMAL_DIGITS) return null;
  return { ...c, cast: decimalCast(id, scale), type: `DECIMAL(${MAX_DECIMAL_DIGITS},${scale})`, numeric: { ...c.numeric, scale } };
}

/**
 * Pure: DuckDB's expression for a decimal's text as DECIMAL(38,scale), exactly. Its own cast of
 * text to a 38-digit decimal costs some 30 µs a value (1.5.6); this one reads the digits as one
 * 128-bit integer (the fraction padded to `scale`) and scales it by multiplying with
 * 10^-scale, which moves no digit: about 14 times faster, the same values.
 */
export function decimalCast(id: string, scale: number): string {
  if (scale === 0) return `CAST(CAST(${id} AS HUGEINT) AS DECIMAL(${MAX_DECIMAL_DIGITS},0))`;
  const unsigned = `ltrim(${id}, '-')`;
  const digits = `(CASE WHEN starts_with(${id}, '-') THEN '-' ELSE '' END) || split_part(${unsigned}, '.', 1) || rpad(split_part(${unsigned}, '.', 2), ${scale}, '0')`;
  return `CAST(CAST(${digits} AS HUGEINT) AS DECIMAL(${MAX_DECIMAL_DIGITS},0)) * CAST('0.${'0'.repeat(scale - 1)}1' AS DECIMAL(${Math.min(scale + 1, MAX_DECIMAL_DIGITS)},${scale}))`;
}

const SIMPLE: Readonly<Record<string, string>> = {
  'timestamp with time zone': 'TIMESTAMPTZ',
  'timestamp without time zone': 'TIMESTAMP',
  date: 'DATE',
  boolean: 'BOOLEAN',
  smallint: 'SMALLINT',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  uuid: 'UUID',
  'double precision': 'DOUBLE',
  real: 'FLOAT',
};

/** Pure: a column's way out. `stats`: for a numeric column, what it holds. */
export function exportColumn(c: SourceColumn, stats?: NumericStats): ExportColumn {
  const id = quoteIdent(c.name);
  const base = { name: c.name, sourceType: c.type, read: `${id}::text`, comment: c.comment };
  if (c.type === 'numeric' || c.type.startsWith('numeric(')) {
    const fit = decimalFit(stats ?? { maxScale: null, maxIntegerDigits: null, special: 0 });
    const type = fit.asString ? 'VARCHAR' : `DECIMAL(${fit.precision},${fit.scale})`;
    return { ...base, cast: fit.asString ? id : decimalCast(id, fit.scale), type, numeric: fit };
  }
  // An array leaves as JSON, which DuckDB reads into a list of its element's text.
  if (c.type.endsWith('[]')) return { ...base, read: `array_to_json(${id})::text`, cast: `from_json(${id}, '["VARCHAR"]')`, type: 'VARCHAR[]' };
  const simple = SIMPLE[c.type];
  if (simple) return { ...base, cast: `CAST(${id} AS ${simple})`, type: simple };
  // text, jsonb (its text, numbers in it untouched) and anything else: the text Postgres gave.
  return { ...base, cast: id, type: 'VARCHAR' };
}

export { quoteIdent };
