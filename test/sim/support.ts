// HTTP helpers for the simulator's tests over real HTTP: plain fetch plus a lossless JSON view
// so exact number literals can be compared.
import { request } from 'node:http';
import { parse } from 'lossless-json';

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  /** JSON.parse of the body (numbers as JS numbers): for shapes */
  json: any;
  /** lossless parse (numbers as LosslessNumber): for exact literals */
  exact: any;
}

export async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  const r = await fetch(url, { headers, method });
  const text = await r.text();
  let json: unknown;
  let exact: unknown;
  try {
    json = JSON.parse(text);
    exact = parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json, exact };
}

export interface RawRes {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** set when the connection failed before the body completed */
  error: Error | null;
  msToEnd: number;
}

/** a GET through node:http that reports a broken body instead of throwing */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawRes> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const finish = (error: Error | null) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error, msToEnd: Date.now() - started });
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(null));
      res.on('error', (e) => finish(e));
      res.on('aborted', () => finish(new Error('aborted')));
      res.on('close', () => finish(res.complete ? null : new Error('incomplete body')));
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: e, msToEnd: Date.now() - started }));
    req.end();
  });
}

/** the body without meta.servedAt, which changes on every call */
export function withoutServedAt(text: string): string {
  return text.replace(/"servedAt":"[^"]*"/g, '"servedAt":""');
}
