// A gateway or proxy that repeats the key it was sent (`SimEcho` in types.ts): real ones do,
// in a problem's title ("bad key ..."), its detail, a header (`WWW-Authenticate`'s
// error_description, a request id made from the credential) or an HTML error page, and in
// whatever form their framework writes: as sent, percent-encoded, escaped for JSON or HTML, or
// cut short. Requests carrying `Authorization: Bearer <key>` whose path starts with the
// echo's `path` get its answer; the dataset is untouched.
import { bearerKey } from './outcome.ts';
import type { EchoForm, EchoPlace, SimEcho } from './types.ts';

export const ECHO_PLACES: readonly EchoPlace[] = ['title', 'detail', 'header', 'html'];
export const ECHO_FORMS: readonly EchoForm[] = ['raw', 'percent', 'percentLower', 'formEncoded', 'jsonUnicode', 'htmlNamed', 'htmlDecimal', 'htmlHexPadded', 'prefix', 'suffix'];

const entity = (c: string, f: (n: number) => string) => c.replace(/[&<>"'\\%]/g, (x) => f(x.charCodeAt(0)));

/** Pure: `key` written in `form`. `prefix` and `suffix` are 12 characters of it, as a cut leaves them. */
export function echoForm(key: string, form: EchoForm): string {
  switch (form) {
    case 'raw':
      return key;
    case 'percent':
      return encodeURIComponent(key);
    case 'percentLower':
      return encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    case 'formEncoded':
      return new URLSearchParams({ k: key }).toString().slice(2);
    case 'jsonUnicode':
      return [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    case 'htmlNamed':
      return key.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
    case 'htmlDecimal':
      return entity(key, (n) => `&#${n};`);
    case 'htmlHexPadded':
      return entity(key, (n) => `&#x${n.toString(16).toUpperCase().padStart(5, '0')};`);
    case 'prefix':
      return key.slice(0, 12);
    case 'suffix':
      return key.slice(-12);
  }
}

/** The `echoes` option, checked: a copy. */
export function echoesOption(list: readonly SimEcho[] | undefined): SimEcho[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new RangeError('simulator option echoes must be an array of { path, place, status?, forms? }');
  return list.map((e, i) => {
    const at = `simulator option echoes[${i}]`;
    if (typeof e?.path !== 'string' || !e.path.startsWith('/')) throw new RangeError(`${at}.path must be a path prefix starting with /`);
    if (!ECHO_PLACES.includes(e.place)) throw new RangeError(`${at}.place must be one of ${ECHO_PLACES.join(', ')}, got ${String(e.place)}`);
    if (e.status !== undefined && !(Number.isInteger(e.status) && e.status >= 400 && e.status <= 599)) throw new RangeError(`${at}.status must be a 4xx or 5xx status`);
    for (const f of e.forms ?? []) if (!ECHO_FORMS.includes(f)) throw new RangeError(`${at}.forms: ${String(f)} is not one of ${ECHO_FORMS.join(', ')}`);
    return { ...e, ...(e.forms ? { forms: [...e.forms] } : {}) };
  });
}

/** What the server answers for an echo: status, headers beyond its own, and the problem's fields or an HTML body. */
export interface EchoAnswer {
  status: number;
  headers: Record<string, string>;
  /** A problem document's title and detail, or (place 'html') the body of a text/html page. */
  title?: string;
  detail?: string;
  html?: string;
}

const TITLES: Readonly<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden', 500: 'Internal Server Error' };

/** Pure: the echo a request gets, or null (no echo for its path, or no Bearer key sent). */
export function echoFor(list: readonly SimEcho[], pathAndQuery: string, headers: Record<string, string>): EchoAnswer | null {
  const echo = list.find((e) => pathAndQuery.startsWith(e.path));
  const key = echo ? bearerKey(headers) : null;
  if (!echo || key === null) return null;
  const status = echo.status ?? 401;
  const said = `bad key ${(echo.forms ?? ECHO_FORMS).map((f) => echoForm(key, f)).join(' | ')}`;
  switch (echo.place) {
    case 'title':
      return { status, headers: {}, title: said, detail: 'The API key is not valid.' };
    case 'detail':
      return { status, headers: {}, detail: `The API key is not valid: ${said}` };
    case 'header':
      // Header values are visible ASCII: each form is one already, but raw quotes stay unquoted.
      return { status, headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${said}"`, 'X-Request-Id': said }, detail: 'The API key is not valid.' };
    case 'html': {
      const title = `${status} ${TITLES[status] ?? 'Error'}`;
      return { status, headers: {}, html: `<!doctype html>\n<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${said}</p><hr><address>nginx</address></body></html>\n` };
    }
  }
}
