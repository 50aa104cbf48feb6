import { describe, expect, it } from 'vitest';
import { PermanentError, ProblemError, TransientError, UpstreamServerError } from '../../src/lib/errors.ts';
import { parseProblem, problemError } from '../../src/upstream/problem.ts';

const h = (init: Record<string, string> = {}) => new Headers(init);

describe('parseProblem', () => {
  it('reads an RFC 9457 document with extensions', () => {
    const p = parseProblem({
      status: 403,
      headers: h({ 'content-type': 'application/problem+json' }),
      path: '/api/v1/tokens/aave/full',
      text: JSON.stringify({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'missing scope', code: 'missing_scope', scope: 'tokens:read:aave', instance: '/api/v1/tokens/aave/full', requestId: 'r-1', hint: 'ask' }),
    });
    expect(p).toMatchObject({ status: 403, code: 'missing_scope', scope: 'tokens:read:aave', title: 'Forbidden', detail: 'missing scope', requestId: 'r-1', instance: '/api/v1/tokens/aave/full' });
    expect(p.extensions).toEqual({ hint: 'ask' });
  });

  it('takes request_id, else the X-Request-Id header, whatever the content type', () => {
    expect(parseProblem({ status: 500, headers: h({ 'content-type': 'text/plain' }), path: '/', text: '{"code":"internal_error","request_id":"r-2"}' }).requestId).toBe('r-2');
    expect(parseProblem({ status: 500, headers: h({ 'x-request-id': 'r-3' }), path: '/', text: '{"code":"internal-error"}' }).requestId).toBe('r-3');
  });

  it('handles HTML, plain text and empty bodies', () => {
    const html = parseProblem({ status: 502, statusText: 'Bad Gateway', headers: h({ 'content-type': 'text/html' }), path: '/v1/tokens', text: '<html><head><style>x{}</style></head><body><h1>502 Bad Gateway</h1></body></html>' });
    expect(html).toMatchObject({ status: 502, code: undefined, title: 'Bad Gateway', detail: '502 Bad Gateway' });
    expect(parseProblem({ status: 404, headers: h(), path: '/', text: '' })).toMatchObject({ status: 404, code: undefined, detail: undefined });
    expect(parseProblem({ status: 400, headers: h(), path: '/', text: 'bad things' }).detail).toBe('bad things');
  });

  it('reads a wrapped { error: { code, message } } body', () => {
    expect(parseProblem({ status: 400, headers: h(), path: '/', text: '{"error":{"code":"invalid-parameter","message":"bad slug"}}' })).toMatchObject({ code: 'invalid-parameter', title: 'bad slug' });
  });

  it('keeps the HTTP status when the body claims another', () => {
    const p = parseProblem({ status: 503, headers: h(), path: '/', text: '{"status":200,"code":"service-unavailable"}' });
    expect(p.status).toBe(503);
    expect(p.extensions.bodyStatus).toBeDefined();
  });

  it('bounds long texts', () => {
    expect(parseProblem({ status: 500, headers: h(), path: '/', text: 'x'.repeat(10_000) }).detail?.length).toBeLessThanOrEqual(501);
  });
});

describe('problemError', () => {
  const fields = (status: number) => parseProblem({ status, headers: h(), path: '/api/v1/x', text: '{"code":"c","title":"t"}' });
  it('4xx are permanent, 5xx transient, both carry the fields', () => {
    const e4 = problemError(fields(404));
    expect(e4).toBeInstanceOf(ProblemError);
    expect(e4).toBeInstanceOf(PermanentError);
    expect(e4).toMatchObject({ status: 404, code: 'c' });
    expect(e4.message).toBe('GET /api/v1/x failed with 404 c: t');
    const e5 = problemError(fields(503));
    expect(e5).toBeInstanceOf(UpstreamServerError);
    expect(e5).toBeInstanceOf(TransientError);
    expect(e5).toMatchObject({ status: 503, code: 'c' });
  });
});

describe('the problem fields, declared once for both classes', () => {
  const fields = parseProblem({ status: 403, headers: h({ 'x-request-id': 'r-9' }), path: '/api/v1/tokens/aave/full', text: '{"code":"missing_scope","scope":"tokens:read:aave","title":"Forbidden","detail":"d","instance":"/i","hint":"ask"}' });

  it('each class keeps its name and base, and every field is readable as before', () => {
    const e4 = new ProblemError(fields);
    const e5 = new UpstreamServerError({ ...fields, status: 503 });
    expect([e4.name, e5.name]).toEqual(['ProblemError', 'UpstreamServerError']);
    expect(e4).toBeInstanceOf(PermanentError);
    expect(e4).not.toBeInstanceOf(TransientError);
    expect(e5).toBeInstanceOf(TransientError);
    expect(e5).not.toBeInstanceOf(ProblemError);
    for (const e of [e4, e5]) {
      expect(e).toBeInstanceOf(Error);
      expect({ code: e.code, scope: e.scope, requestId: e.requestId, path: e.path, instance: e.instance, detail: e.detail, title: e.title }).toEqual({
        code: 'missing_scope',
        scope: 'tokens:read:aave',
        requestId: 'r-9',
        path: '/api/v1/tokens/aave/full',
        instance: '/i',
        detail: 'd',
        title: 'Forbidden',
      });
      expect(e.extensions).toEqual({ hint: 'ask' });
    }
    expect(e4.problem).toEqual(fields);
    expect(e5.problem).toEqual({ ...fields, status: 503 });
  });

  it('the fields are own properties: loggers serialize them as before', () => {
    const e = new ProblemError(fields);
    expect(Object.keys(e)).toEqual(expect.arrayContaining(['status', 'code', 'scope', 'requestId', 'path', 'instance', 'detail']));
    expect(Object.keys(e)).not.toContain('problem');
  });
});
