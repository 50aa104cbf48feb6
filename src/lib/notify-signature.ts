// The signature each notification carries, as Stripe and GitHub sign theirs:
// `X-Tesync-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with
// TE_NOTIFY_SECRET. The receiver recomputes it over the body as received and refuses a `t` too
// far from its own clock (a replayed delivery). docs/operations.md, "Alerts", shows the check.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Tesync-Signature';

/** Pure: the header's value for `body` sent at `unixSeconds`. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/**
 * Pure: whether `header` signs `body` with `secret`, at a `t` within `toleranceSeconds` of
 * `nowSeconds`. What a receiver does; tesync's tests check its deliveries with it.
 */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
