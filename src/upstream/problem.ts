// Error responses into typed errors. Upstream promises RFC 9457 problem documents, but a
// proxy in front of it may answer with HTML, plain text or nothing: every form ends up as the
// same fields, so callers decide by `status` and `code` alone. Every text in them is upstream's
// and may repeat the key it was sent: each is scrubbed here, whole, before it is cut or kept.
import { isLosslessNumber, parseJson } from '../lib/json.ts';
import { scrubDeep, type Scrub } from '../lib/secrets.ts';
import { ProblemError, UpstreamServerError, type UpstreamProblemFields } from '../lib/errors.ts';

const KNOWN = new Set(['type', 'title', 'status', 'detail', 'instance', 'code', 'scope', 'requestId', 'request_id']);
const MAX_TEXT = 500;

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length > MAX_TEXT ? `${v.slice(0, MAX_TEXT)}…` : v;
  if (isLosslessNumber(v)) return v.value;
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v);
}

/** A short, single-line excerpt of a non-JSON body (tags dropped), for `detail`. */
function excerpt(text: string): string | undefined {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain ? str(plain) : undefined;
}

export interface ErrorResponse {
  status: number;
  /** Status text of the response, used as the title when the body has none. */
  statusText?: string;
  headers: { get(name: string): string | null };
  text: string;
  /** Path and query of the request. */
  path: string;
}

/** The problem fields of an error response, whatever its content type and body, each text scrubbed of the secrets (`scrub`). */
export function parseProblem(res: ErrorResponse, scrub: Scrub = (t) => t): UpstreamProblemFields {
  const text = (v: unknown) => str(typeof v === 'string' ? scrub(v) : v);
  const headerId = text(res.headers.get('x-request-id') ?? undefined);
  const statusText = res.statusText ? scrub(res.statusText) : undefined;
  let doc: Record<string, unknown> | undefined;
  try {
    const parsed = res.text.trim() ? parseJson(res.text) : undefined;
    if (isObject(parsed)) {
      // Some frameworks wrap the error: { error: { code, message } }.
      doc = isObject(parsed.error) && !('code' in parsed) ? { ...parsed.error, title: parsed.error.message ?? parsed.error.title } : parsed;
    }
  } catch {
    doc = undefined;
  }
  if (!doc) {
    return {
      status: res.status,
      code: undefined,
      type: undefined,
      title: statusText,
      // Scrubbed before the tags go: a key holding `<` or `>` is found whole.
      detail: excerpt(scrub(res.text)),
      instance: undefined,
      scope: undefined,
      requestId: headerId,
      extensions: {},
      path: res.path,
    };
  }
  const extensions: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!KNOWN.has(k)) extensions[scrub(k)] = scrubDeep(v, scrub);
  return {
    // The HTTP status is what happened; a body claiming another is kept as an extension.
    status: res.status,
    code: text(doc.code),
    type: text(doc.type),
    title: text(doc.title) ?? statusText,
    detail: text(doc.detail),
    instance: text(doc.instance),
    scope: text(doc.scope),
    requestId: text(doc.requestId) ?? text(doc.request_id) ?? headerId,
    extensions: str(doc.status) !== undefined && str(doc.status) !== String(res.status) ? { ...extensions, bodyStatus: scrubDeep(doc.status, scrub) } : extensions,
    path: res.path,
  };
}

/** Pure: the problem fields with every text scrubbed (a problem tesync built from upstream's headers, a refused redirect's). */
export function scrubProblem(p: UpstreamProblemFields, scrub: Scrub): UpstreamProblemFields {
  const t = (v: string | undefined) => (v === undefined ? undefined : scrub(v));
  return { ...p, code: t(p.code), type: t(p.type), title: t(p.title), detail: t(p.detail), instance: t(p.instance), scope: t(p.scope), requestId: t(p.requestId), extensions: scrubDeep(p.extensions, scrub), path: scrub(p.path) };
}

/** 5xx are worth retrying; any other error status is not. */
export function problemError(fields: UpstreamProblemFields): ProblemError | UpstreamServerError {
  return fields.status >= 500 ? new UpstreamServerError(fields) : new ProblemError(fields);
}

export function isUpstreamProblem(err: unknown): err is ProblemError | UpstreamServerError {
  return err instanceof ProblemError || err instanceof UpstreamServerError;
}
