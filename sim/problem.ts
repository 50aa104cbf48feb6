// RFC 9457 problem documents in each API's dialect: snake_case codes on the app host,
// kebab-case codes plus `instance` (always a public /v1 path) on the gateway.
export type Api = 'app' | 'gateway' | 'none';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const APP_DEFAULT_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'no_credits_for_token',
  403: 'missing_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'engine_data_unavailable',
};

const GATEWAY_DEFAULT_CODES: Record<number, string> = {
  400: 'invalid-parameter',
  401: 'unauthorized',
  404: 'not-found',
  405: 'method-not-allowed',
  429: 'rate-limit-exceeded',
  500: 'internal-error',
  503: 'service-unavailable',
};

export function defaultCode(api: Api, status: number): string {
  const table = api === 'gateway' ? GATEWAY_DEFAULT_CODES : APP_DEFAULT_CODES;
  const code = table[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
  return api === 'gateway' ? code.replace(/_/g, '-') : code;
}

export interface ProblemInput {
  api: Api;
  status: number;
  code?: string;
  detail: string;
  /** request path without query; the gateway rewrites internal paths to /v1 */
  path: string;
  extensions?: Record<string, unknown>;
}

export function problemBody(p: ProblemInput): Record<string, unknown> {
  const code = p.code ?? defaultCode(p.api, p.status);
  const host = p.api === 'gateway' ? 'gateway.tokeneconomics.invalid' : 'api.tokeneconomics.invalid';
  const body: Record<string, unknown> = {
    type: `https://${host}/problems/${code}`,
    title: TITLES[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    code,
  };
  if (p.api === 'gateway') body.instance = publicInstance(p.path);
  return { ...body, ...p.extensions };
}

function publicInstance(path: string): string {
  return path.startsWith('/v1/internal') ? '/v1' : path;
}
