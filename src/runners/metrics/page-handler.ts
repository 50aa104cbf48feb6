// The status page's routes, on the metrics server of a worker or of `tesync status --serve`:
//   /              the page (HTML; refreshes itself)
//   /status.json   its view model, for scripts
//   /body/<id>     a failure's archived body, as plain text: never rendered, never run
// Only GET and HEAD for a Host the page answers reach here (server.ts). Every text of the model
// is scrubbed of the configured secrets (keys, passwords) before it is escaped, and every
// response again as log lines are, though none should be in what is read. The warehouse is
// read by one reader at a time (page-share.ts): a burst of requests shares one read, and its
// page is rendered once for all of them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger.ts';
import { scrub } from '../../lib/logger.ts';
import { scrubDeep } from '../../lib/secrets.ts';
import type { FailureBody } from '../../store/read/failure-bodies.ts';
import { PAGE_CSP, renderPage } from './page-html.ts';
import { buildPageModel, type PageData } from './page-model.ts';
import { oneAtATime, shareReads } from './page-share.ts';

export interface StatusPageOptions {
  read(): Promise<PageData>;
  body(id: number): Promise<FailureBody | undefined>;
  secrets: readonly string[];
  logger: Logger;
  /** The pacing clock (monotonic, ms) that times how long one read is shared; performance.now unset. */
  now?: () => number;
  /** How long one read serves every request (PAGE_SHARE_MS unset). */
  shareMs?: number;
}

/** One read of the page, rendered when first asked for and then kept with it. */
interface PageView {
  html(): string;
  json(): string;
}

export interface StatusPage {
  /** Answers the request when the path is the page's; false otherwise (nothing sent). */
  handle(req: IncomingMessage, res: ServerResponse, path: string): boolean;
}

const COMMON = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' } as const;
/** A body is text to read: a document of its own that may load, run and frame nothing. */
const BODY_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'";
const BODY_PATH = /^\/body\/(\d{1,15})$/;

export function createStatusPage(options: StatusPageOptions): StatusPage {
  const clean = (text: string) => scrub(text, options.secrets);
  const fail = (res: ServerResponse, what: string, err: unknown) => {
    options.logger.warn({ err }, `status page: could not read ${what}`);
    if (!res.headersSent) res.writeHead(500, { ...COMMON, 'content-type': 'text/plain; charset=utf-8' });
    res.end(`could not read ${what}; see the log\n`);
  };
  const view = shareReads(
    async (): Promise<PageView> => {
      // Scrubbed before it is escaped: `&lt;` of a key holding `<` is the key all the same.
      const model = scrubDeep(buildPageModel(await options.read()), clean);
      let html: string | undefined;
      let json: string | undefined;
      return { html: () => (html ??= clean(renderPage(model))), json: () => (json ??= clean(JSON.stringify(model, null, 2))) };
    },
    { now: options.now ?? (() => performance.now()), ...(options.shareMs === undefined ? {} : { shareMs: options.shareMs }) },
  );
  // Archived bodies are read one at a time too: a burst of them holds one connection, not the pool.
  const bodies = oneAtATime();
  return {
    handle(_req, res, path) {
      if (path === '/' || path === '/index.html') {
        void view().then((v) => v.html()).then(
          (html) => res.writeHead(200, { ...COMMON, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP }).end(html),
          (err: unknown) => fail(res, 'the warehouse', err),
        );
        return true;
      }
      if (path === '/status.json') {
        void view().then((v) => v.json()).then(
          (json) => res.writeHead(200, { ...COMMON, 'content-type': 'application/json; charset=utf-8' }).end(json),
          (err: unknown) => fail(res, 'the warehouse', err),
        );
        return true;
      }
      const m = BODY_PATH.exec(path);
      if (m) {
        void bodies(() => options.body(Number(m[1]))).then(
          (b) => {
            if (!b) {
              res.writeHead(404, { ...COMMON, 'content-type': 'text/plain; charset=utf-8' }).end('no archived body of a failure has this id\n');
              return;
            }
            const text = b.body.kind === 'bytes' ? b.body.bytes.toString('utf8') : b.body.kind === 'none' ? '' : b.body.text;
            res
              .writeHead(200, {
                ...COMMON,
                'content-type': 'text/plain; charset=utf-8',
                'content-security-policy': BODY_CSP,
                'content-disposition': 'inline',
                // What it is, in headers: the body itself is left as it was kept.
                'x-tesync-body': `${b.body.kind}; ${b.source} ${b.httpStatus} ${b.status}`,
              })
              .end(clean(text));
          },
          (err: unknown) => fail(res, 'the archived body', err),
        );
        return true;
      }
      if (path === '/favicon.ico') {
        res.writeHead(204, COMMON).end();
        return true;
      }
      return false;
    },
  };
}
