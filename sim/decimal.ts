// Decimal strings. Values are produced as strings with more digits than a double holds, so
// a client that parses them through a JS number visibly loses digits.
import type { Rng } from './random.ts';

const DECIMAL = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

/** true for canonical literals: no exponent, no redundant zeros, no '-0' */
export function isCanonicalDecimal(s: string): boolean {
  return DECIMAL.test(s) && s !== '-0';
}

export function canonicalDecimal(s: string): string {
  let neg = s.startsWith('-');
  let body = neg || s.startsWith('+') ? s.slice(1) : s;
  let [int = '', frac = ''] = body.split('.');
  int = int.replace(/^0+/, '') || '0';
  frac = frac.replace(/0+$/, '');
  body = frac ? `${int}.${frac}` : int;
  if (body === '0') neg = false;
  return neg ? `-${body}` : body;
}

/**
 * A decimal near `x` with exactly `sigDigits` significant digits (the last one non-zero, so
 * the literal is canonical as built): the leading 12 digits follow `x`, the rest are random.
 * Hot path at benchmark scale: random digits are drawn nine at a time.
 */
export function decimalFromFloat(x: number, sigDigits: number, rng: Rng): string {
  if (!Number.isFinite(x) || x === 0) return '0';
  const ax = Math.abs(x);
  // fast path for most values: about 12 real leading digits from one scaled integer
  if (ax >= 1 && ax < 1e15) {
    const intLen = String(Math.floor(ax)).length;
    const real = Math.max(0, 12 - intLen);
    const rest = sigDigits - intLen - real;
    const scaled = String(Math.floor(ax * 10 ** real));
    if (rest > 0 && scaled.length === intLen + real) {
      return `${x < 0 ? '-' : ''}${scaled.slice(0, intLen)}.${scaled.slice(intLen)}${randomDigits(rest, rng)}`;
    }
  }
  const lead = Math.min(12, sigDigits);
  let e = Math.floor(Math.log10(ax));
  let m = Math.round(ax / 10 ** (e - lead + 1));
  // log10 can be off by one near powers of ten: renormalise to exactly `lead` digits.
  if (m >= 10 ** lead) {
    m = Math.round(m / 10);
    e += 1;
  } else if (m < 10 ** (lead - 1)) {
    m = Math.round(ax / 10 ** (e - lead));
    e -= 1;
  }
  let digits = String(m);
  if (sigDigits > lead) digits += randomDigits(sigDigits - lead, rng);
  else if (digits.endsWith('0')) digits = digits.slice(0, -1) + String(rng.int(1, 9));
  const intLen = e + 1;
  let s: string;
  if (intLen <= 0) s = `0.${'0'.repeat(-intLen)}${digits}`;
  else if (intLen >= digits.length) s = digits + '0'.repeat(intLen - digits.length);
  else s = `${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
  return x < 0 ? `-${s}` : s;
}

const POW10 = Array.from({ length: 10 }, (_, k) => 10 ** k);

/** n random digits, the last one non-zero; drawn nine at a time */
function randomDigits(n: number, rng: Rng): string {
  let out = '';
  for (let tail = n - 1; tail > 0; tail -= 9) {
    const k = Math.min(tail, 9);
    out += String(Math.floor(rng.next() * (POW10[k] ?? 1))).padStart(k, '0');
  }
  return out + String(1 + Math.floor(rng.next() * 9));
}

/** exact comparison of two canonical decimals */
export function compareDecimal(a: string, b: string): number {
  const na = a.startsWith('-');
  const nb = b.startsWith('-');
  if (na !== nb) return na ? -1 : 1;
  const mag = compareMagnitude(na ? a.slice(1) : a, nb ? b.slice(1) : b);
  return na ? -mag : mag;
}

function compareMagnitude(a: string, b: string): number {
  const [ai = '', af = ''] = a.split('.');
  const [bi = '', bf = ''] = b.split('.');
  if (ai.length !== bi.length) return ai.length < bi.length ? -1 : 1;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const len = Math.max(af.length, bf.length);
  const pa = af.padEnd(len, '0');
  const pb = bf.padEnd(len, '0');
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

/** count of significant digits of a canonical decimal */
export function significantDigits(s: string): number {
  const abs = s.replace(/^-/, '');
  // trailing zeros of an integer carry no precision; those after a decimal point do
  const digits = (abs.includes('.') ? abs.replace('.', '') : abs.replace(/0+$/, '')).replace(/^0+/, '');
  return digits.length;
}
