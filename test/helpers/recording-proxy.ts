// A loopback proxy in front of the simulator, standing for the upstream as tesync reaches it:
// every request that leaves tesync is recorded (its request line and key header), whatever
// path it took; what the test sets in `answers` (by path and query as received) is answered
// by the proxy itself (a redirect, a page naming a next link), and the rest is forwarded to
// the simulator as is.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, MemoryRecorder } from '../../src/upstream/index.ts';
import { recordingSleep } from './fast-clock.ts';
import { patience } from './patience.ts';
import { createTestLogger } from './services.ts';

export interface SeenRequest {
  /** `GET /v1/tokens HTTP/1.1` */
  line: string;
  /** Path and query as received. */
  path: string;
  authorization: string | undefined;
}

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RecordingProxy {
  url: string;
  seen: SeenRequest[];
  answers: Map<string, ProxyAnswer>;
  close(): Promise<void>;
}

export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const seen: SeenRequest[] = [];
  const answers = new Map<string, ProxyAnswer>();
  const server = createServer((req, res) => {
    seen.push({ line: `${req.method} ${req.url} HTTP/${req.httpVersion}`, path: req.url ?? '', authorization: req.headers.authorization });
    const own = answers.get(req.url ?? '');
    if (own) {
      res.writeHead(own.status, own.headers);
      res.end(own.body);
      return;
    }
    const out = httpRequest({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, answers, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The upstream client aimed at the proxy for both sources, with these keys; its log lines for the test to search. */
export function proxiedUpstream(url: string, keys: { app: string; gateway: string }) {
  const recorder = new MemoryRecorder();
  const { sleep } = recordingSleep();
  const log = createTestLogger([keys.app, keys.gateway]);
  const upstream = createUpstream({
    sleep,
    config: {
      app: { url, apiKey: keys.app },
      gateway: { url, apiKey: keys.gateway },
      requestTimeoutMs: patience(3_000),
      maxResponseBytes: 1024 * 1024,
      maxAttempts: 2,
      maxRateWaitMs: 20_000,
    },
    budget: new InProcessBudget({ sleep }),
    recorder,
    logger: log.logger,
    retry: FAST_RETRY_POLICY,
  });
  return { upstream, recorder, lines: log.lines };
}
