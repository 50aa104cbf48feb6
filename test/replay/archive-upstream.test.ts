// The replay's upstream (src/replay/archive-upstream.ts): a request is answered by the first
// archived body of the try not yet served whose path, below any base path, and query are the
// ones asked; a 2xx as the client hands it on (numbers exact), a refusal's body as the error the
// client throws (its hash kept, for the row that links to it), and a request none answers fails
// the try, counted.
import { describe, expect, it } from 'vitest';
import { isLosslessNumber } from '../../src/lib/json.ts';
import { ProblemError } from '../../src/lib/errors.ts';
import { answers, ArchiveUpstream, askedPath, NotInArchive, type ArchivedBody } from '../../src/replay/archive-upstream.ts';

const body = (id: number, path: string, text: string, httpStatus = 200): ArchivedBody => ({
  id,
  path,
  sha256: `h${id}`,
  httpStatus,
  contentType: 'application/json',
  bytes: new TextEncoder().encode(text),
});

describe('the archive upstream', () => {
  it('says a request as the client archived it: the route below any base path, the query in order', () => {
    const asked = askedPath({ route: 'app.history', params: { slug: 'aurora' }, query: { stream: 'all', from: '2026-01-01' } });
    expect(asked).toEqual({ path: '/api/v1/tokens/aurora/metrics/history', query: 'from=2026-01-01&stream=all' });
    expect(answers('/api/v1/tokens/aurora/metrics/history?stream=all&from=2026-01-01', asked)).toBe(true);
    expect(answers('/te/api/v1/tokens/aurora/metrics/history?from=2026-01-01&stream=all', asked)).toBe(true);
    expect(answers('/api/v1/tokens/aurora/metrics/history?from=2026-01-02&stream=all', asked)).toBe(false);
    expect(answers('/api/v1/tokens/basalt/metrics/history?from=2026-01-01&stream=all', asked)).toBe(false);
    // A next page's link, absolute on whatever host served it.
    expect(askedPath({ route: 'app.tokens', link: 'http://127.0.0.1:9/te/api/v1/tokens?page=2' })).toEqual({ path: '/te/api/v1/tokens', query: 'page=2' });
  });

  it('serves the bodies of one path in the order read, numbers exact, then none', async () => {
    const up = new ArchiveUpstream([body(1, '/api/v1/screener', '{"data":[{"x":1.50}],"meta":{}}'), body(2, '/api/v1/screener', '{"data":[],"meta":{}}')]);
    const first = await up.get({ route: 'app.screener' });
    expect(first).toMatchObject({ status: 200, path: '/api/v1/screener', sha256: 'h1', notModified: false });
    const x = (first.body as { data: { x: unknown }[] }).data[0]!.x;
    expect(isLosslessNumber(x) && x.value).toBe('1.50');
    expect((await up.get({ route: 'app.screener' })).sha256).toBe('h2');
    await expect(up.get({ route: 'app.screener' })).rejects.toBeInstanceOf(NotInArchive);
    expect(up.gaps).toEqual(['/api/v1/screener']);
  });

  it('throws a refusal as the client does, its body named', async () => {
    const up = new ArchiveUpstream([body(7, '/api/v1/tokens/aurora/full', '{"type":"about:blank","title":"Payment Required","status":402,"code":"no_credits"}', 402)]);
    const err = await up.get({ route: 'app.bundle', params: { slug: 'aurora' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ status: 402, code: 'no_credits', sha256: 'h7' });
  });
});
