// ETags and 304 Not Modified (`SimOptions.etags`). The tag is the sha256 hex of the body with
// its `meta.servedAt` member cut out: servedAt is the clock's and moves on every answer, so the
// same data gives the same tag, and anything else that moves (a new epoch, a recomputation, a
// form) gives a new one. A request whose If-None-Match names the tag (in a list, compared
// weakly, or `*`) gets 304 with no body and the tag.
import { createHash } from 'node:crypto';

/** `"<sha256 hex>"` of `body` without its member `"servedAt":"<servedAt>"` (and the comma after it). */
export function etagOf(body: string, servedAt: string | null): string {
  let text = body;
  if (servedAt !== null) {
    const member = `"servedAt":${JSON.stringify(servedAt)}`;
    const at = text.indexOf(member);
    if (at >= 0) {
      const end = at + member.length;
      text = text.slice(0, at) + text.slice(text[end] === ',' ? end + 1 : end);
    }
  }
  return `"${createHash('sha256').update(text, 'utf8').digest('hex')}"`;
}

/** Whether an If-None-Match header value names `etag` (RFC 9110 13.1.2: `*`, or a list compared weakly). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (m[1] === opaque) return true;
  return false;
}
