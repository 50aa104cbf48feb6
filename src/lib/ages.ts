// Ages and instants as `tesync status` and the status page write them: `42s`, `3.5h`, `151.6d`;
// `2026-06-30 00:00 UTC`. Pure.

export function age(from: Date | null, now: Date): string {
  if (!from) return 'never';
  const s = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)}h`;
  return `${(s / 86400).toFixed(1)}d`;
}

export const ago = (from: Date | null, now: Date) => (from ? `${age(from, now)} ago` : 'never');
/** `2026-06-30 00:00`-style, without the zone (the header says UTC). */
export const minute = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
export const utc = (d: Date) => `${minute(d)} UTC`;
/** `2026-06-30 00:00:00`-style, without the zone. */
export const second = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

/** A duration: `850 ms`, `42s`, `3m 05s`, `2h 10m`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
