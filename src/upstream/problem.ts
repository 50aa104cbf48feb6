// Error responses into typed errors. Upstream promises RFC 9457 problem documents, but a
// proxy in front of it may answer with HTML, plain text or nothing: every form ends up as the
// same fields, so callers decide by `status` and `code` alone.
import { isLosslessNumber, parseJson } from '../lib/json.ts';
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

/** The problem fields of an error response, whatever its content type and body. */
export function parseProblem(res: ErrorResponse): UpstreamProblemFields {
  const headerId = res.headers.get('x-request-id') ?? undefined;
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
      title: res.statusText || undefined,
      detail: excerpt(res.text),
      instance: undefined,
      scope: undefined,
      requestId: headerId,
      extensions: {},
      path: res.path,
    };
  }
  const extensions: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!KNOWN.has(k)) extensions[k] = v;
  return {
    // The HTTP status is what happened; a body claiming another is kept as an extension.
    status: res.status,
    code: str(doc.code),
    type: str(doc.type),
    title: str(doc.title) ?? (res.statusText || undefined),
    detail: str(doc.detail),
    instance: str(doc.instance),
    scope: str(doc.scope),
    requestId: str(doc.requestId) ?? str(doc.request_id) ?? headerId,
    extensions: str(doc.status) !== undefined && str(doc.status) !== String(res.status) ? { ...extensions, bodyStatus: doc.status } : extensions,
    path: res.path,
  };
}

/** 5xx are worth retrying; any other error status is not. */
export function problemError(fields: UpstreamProblemFields): ProblemError | UpstreamServerError {
  return fields.status >= 500 ? new UpstreamServerError(fields) : new ProblemError(fields);
}

export function isUpstreamProblem(err: unknown): err is ProblemError | UpstreamServerError {
  return err instanceof ProblemError || err instanceof UpstreamServerError;
}
