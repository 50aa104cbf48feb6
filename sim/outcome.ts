// What a route answers, before the server adds envelope timestamps, headers and faults.
import type { DatasetView } from './data.ts';
import type { RenderCtx } from './render.ts';
import type { KeyGrant } from './types.ts';

export type Outcome =
  | {
      kind: 'ok';
      data: unknown;
      /** meta fields after servedAt (asOf, count, source) */
      meta: Record<string, unknown>;
      /** top-level siblings of data and meta (the gateway screener's insights) */
      siblings?: Record<string, unknown>;
      /** gateway X-Service-Source */
      surface?: string;
    }
  | { kind: 'problem'; status: number; code: string; detail: string; extensions?: Record<string, unknown>; headers?: Record<string, string> }
  /** a body served as is (the OpenAPI document) */
  | { kind: 'raw'; status: number; body: string; contentType: string; surface?: string };

export interface RouteRequest {
  /** path without query, still percent-encoded */
  path: string;
  /** path segments after the API prefix, percent-decoded; null where decoding failed */
  segments: (string | null)[];
  query: URLSearchParams;
  headers: Record<string, string>;
}

export interface RouteEnv {
  view: DatasetView;
  render: RenderCtx;
  appKeys: Record<string, KeyGrant>;
  gatewayKeys: ReadonlySet<string>;
}

export function problem(status: number, code: string, detail: string, extensions?: Record<string, unknown>): Outcome {
  return extensions ? { kind: 'problem', status, code, detail, extensions } : { kind: 'problem', status, code, detail };
}

/** the key of an `Authorization: Bearer <key>` header, or null */
export function bearerKey(headers: Record<string, string>): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return m ? (m[1] ?? null) : null;
}
