// The scrub of secrets (src/lib/secrets.ts): every form a key could take in what the upstream
// says, whole, mixed, encoded twice and cut, is gone; text without one is left as it was.
import { afterEach, describe, expect, it } from 'vitest';
import { recordable } from '../../src/lib/recordable.ts';
import { createScrub, keepSecretsOut, REDACTED, scrubberFor, scrubDeep, WINDOW } from '../../src/lib/secrets.ts';

/** Keys holding each character the issue names (and one plain), as TE_*_API_KEY accepts them. */
const KEYS = {
  plain: 'te_live_Zq81x0PlainKey77',
  quote: "ab'cd'ef'gh-key-1",
  amp: 'k&y&amp;&#60;z-99',
  angles: 'k<e>y<script>x9',
  percent: 'pc%41%2Fk%zz-%25',
  dquote: 'q"u"o"t"e-key-7',
  backslash: 'b\\s\\u0041\\n-key',
  all: `k3y'&<>%"\\x-Q9zLmN0p`,
  plus: 'a+b/c=d~e*f(g)!h',
};

const hex = (n: number, width = 2, upper = true) => (upper ? n.toString(16).toUpperCase() : n.toString(16)).padStart(width, '0');

/** The forms a test looks for, written here independently of the module's own list. */
function forms(key: string): Record<string, string> {
  const utf8 = [...new TextEncoder().encode(key)];
  const special = (c: string) => /[&<>"'\\%]/.test(c);
  return {
    raw: key,
    percent: encodeURIComponent(key),
    percentLower: encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    percentEvery: utf8.map((b) => `%${hex(b)}`).join(''),
    percentMixedCase: utf8.map((b, i) => `%${hex(b, 2, i % 2 === 0)}`).join(''),
    uri: encodeURI(key),
    formEncoded: new URLSearchParams({ k: key }).toString().slice(2),
    json: JSON.stringify(key).slice(1, -1),
    jsonSlash: JSON.stringify(key).slice(1, -1).replace(/\//g, '\\/'),
    jsonUnicodeEvery: [...key].map((c) => `\\u${hex(c.charCodeAt(0), 4, false)}`).join(''),
    jsonUnicodeUpper: [...key].map((c) => (special(c) ? `\\u${hex(c.charCodeAt(0), 4)}` : c === '\\' ? '\\\\' : c)).join(''),
    htmlNamed: key.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!),
    htmlApos: key.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!),
    htmlDecimal: [...key].map((c) => (special(c) ? `&#${c.charCodeAt(0)};` : c)).join(''),
    htmlDecimalPadded: [...key].map((c) => (special(c) ? `&#000${c.charCodeAt(0)};` : c)).join(''),
    htmlHex: [...key].map((c) => (special(c) ? `&#x${hex(c.charCodeAt(0), 2, false)};` : c)).join(''),
    htmlHexPadded: [...key].map((c) => (special(c) ? `&#X${hex(c.charCodeAt(0), 6)};` : c)).join(''),
    // Without `;` where a digit does not follow (a digit would be read as part of the number).
    htmlNoSemicolon: [...key].map((c, i) => (special(c) ? `&#${c.charCodeAt(0)}${/[0-9]/.test(key[i + 1] ?? '') ? ';' : ''}` : c)).join(''),
    htmlEvery: [...key].map((c) => `&#${c.charCodeAt(0)};`).join(''),
    jsonOfHtml: JSON.stringify(key.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)).slice(1, -1),
    percentOfJson: encodeURIComponent(JSON.stringify(key).slice(1, -1)),
    jsonOfJson: JSON.stringify(JSON.stringify(key).slice(1, -1)).slice(1, -1),
    htmlOfJson: JSON.stringify(key).slice(1, -1).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
  };
}

/** Whether `text` still holds `key` in a form that gives it away: whole (decoded) or any WINDOW-long run of a form. */
function leaks(text: string, key: string): string | undefined {
  for (const [name, form] of Object.entries(forms(key))) {
    for (let i = 0; i + WINDOW <= form.length; i++) if (text.includes(form.slice(i, i + WINDOW))) return `${name}: ${form.slice(i, i + WINDOW)}`;
  }
  return undefined;
}

describe('scrub', () => {
  afterEach(() => keepSecretsOut([]));

  for (const [what, key] of Object.entries(KEYS)) {
    const scrub = createScrub([key]);
    it(`finds a key holding ${what} in every form, whole`, () => {
      for (const [name, form] of Object.entries(forms(key))) {
        const said = scrub(`bad key ${form} (${name})`);
        expect(leaks(said, key), `${name}: ${said}`).toBeUndefined();
        expect(said).toBe(`bad key ${REDACTED} (${name})`);
      }
    });

    it(`finds a key holding ${what} cut at each boundary of each form (8 characters or more)`, () => {
      let cuts = 0;
      for (const [name, form] of Object.entries(forms(key))) {
        for (let k = WINDOW; k <= form.length; k++) {
          // A prefix at the end of a text, a suffix at its start: what a cut leaves.
          const end = scrub(`the key was ${form.slice(0, k)}`);
          const start = scrub(`${form.slice(form.length - k)} was the key`);
          expect(leaks(end, key), `${name} prefix ${k}: ${end}`).toBeUndefined();
          expect(leaks(start, key), `${name} suffix ${k}: ${start}`).toBeUndefined();
          expect(end.startsWith('the key was ')).toBe(true);
          expect(start.endsWith(' was the key')).toBe(true);
          cuts += 2;
        }
      }
      expect(cuts).toBeGreaterThan(100);
    });
  }

  it('finds the key as a JSON document says it, and in an HTML error page', () => {
    const key = KEYS.all;
    const scrub = createScrub([key]);
    const json = JSON.stringify({ title: `bad key ${key}`, detail: `again: ${key}` });
    expect(scrub(json)).toBe(JSON.stringify({ title: `bad key ${REDACTED}`, detail: `again: ${REDACTED}` }));
    const page = `<html><body><h1>401</h1><p>bad key ${forms(key).htmlNamed}</p><p>${key}</p></body></html>`;
    expect(scrub(page)).toBe(`<html><body><h1>401</h1><p>bad key ${REDACTED}</p><p>${REDACTED}</p></body></html>`);
  });

  it('leaves text without a secret exactly as it was, escapes and all', () => {
    const scrub = createScrub(Object.values(KEYS));
    for (const text of [
      '',
      'GET /v1/tokens/aurora/history?period=30d failed with 401 unauthorized: Unauthorized',
      '<html><body><p>&lt;b&gt; &amp; &#60; &#x3C; %3C %2B+ \\u003c \\" \\\\</p></body></html>',
      JSON.stringify({ msg: 'upstream request failed; retrying', path: '/api/v1/tokens?page=2&x=%20', attempt: 2 }),
    ]) {
      expect(scrub(text)).toBe(text);
    }
  });

  it('leaves ids and words beside a character of a secret as they are: a cut escape is judged by the secret', () => {
    // A run id's hex digits before a `-`, or `&` and letters at a text's end, look like what a
    // cut leaves of an escape; they are one only where they escape the secret's own neighbour.
    const scrub = createScrub(['never-on-the-page-0xc0ffee', ...Object.values(KEYS)]);
    const ids = Array.from({ length: 200 }, () => crypto.randomUUID());
    for (const id of ids) for (const text of [id, `run ${id} failed`, `${id.slice(0, 13)}`]) expect(scrub(text)).toBe(text);
    for (const text of ['12345678-aaaa', 'deadbeef-on', 'e-&nbspxyzw', 'abc x&#x4', '3Cpage-of', 'job 7f3a9c21:app.tokens']) expect(scrub(text)).toBe(text);
  });

  it('scrubs a secret shorter than 8 characters only where a form of it stands whole', () => {
    const scrub = createScrub(['pw&12']);
    expect(scrub('password pw&12 in clear, pw&amp;12 in html, pw%2612 in a url')).toBe(`password ${REDACTED} in clear, ${REDACTED} in html, ${REDACTED} in a url`);
    expect(scrub('pw&1 and w&12 are pieces')).toBe('pw&1 and w&12 are pieces');
    // Forms shorter than 4 characters are not scrubbed: they would blank ordinary words.
    expect(createScrub(['abc'])('abc abc')).toBe('abc abc');
  });

  it('scrubs several secrets in one text, pieces that meet as one marker', () => {
    const scrub = createScrub([KEYS.plain, KEYS.angles, 'dbpassword1']);
    expect(scrub(`${KEYS.plain}${KEYS.angles} and postgres://u:dbpassword1@h/db`)).toBe(`${REDACTED} and postgres://u:${REDACTED}@h/db`);
  });

  it('builds a matcher once per list of secrets', () => {
    expect(scrubberFor([KEYS.plain, KEYS.all])).toBe(scrubberFor([KEYS.plain, KEYS.all]));
    expect(scrubberFor([KEYS.plain])).not.toBe(scrubberFor([KEYS.all]));
    expect(createScrub([])('anything')).toBe('anything');
  });

  it('scrubs every string of a JSON value, keys too, and leaves the rest', () => {
    const scrub = createScrub([KEYS.all]);
    const value = { a: [`x ${KEYS.all}`, 3, null, true], [KEYS.all]: { deep: encodeURIComponent(KEYS.all) } };
    expect(scrubDeep(value, scrub)).toEqual({ a: [`x ${REDACTED}`, 3, null, true], [REDACTED]: { deep: REDACTED } });
  });

  it('is what recordable does first, once the process keeps its secrets out, before the cut', () => {
    const key = KEYS.all;
    const text = `${'x'.repeat(200)} bad key ${key} ${'y'.repeat(50)}`;
    expect(recordable(text)).toContain(key.slice(0, 8));
    keepSecretsOut([key]);
    const said = recordable(text);
    expect(leaks(said, key)).toBeUndefined();
    expect(said).toContain(REDACTED);
    expect(said.length).toBeLessThanOrEqual(300);
  });
});
