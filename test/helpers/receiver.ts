// A webhook receiver of the test's own (not Slack): a real HTTP server on loopback that answers
// each POST as scripted (a status, Retry-After, or no answer at all) and keeps what arrived, byte
// for byte, with its headers.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What it was answered: a status, or 0 when it was left without an answer. */
  answered: number;
}

export type Answer = { status: number; retryAfter?: string } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; after them, 200. */
  script(answers: Answer[]): void;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks/T000/B000/secret-token-of-the-receiver'): Promise<Receiver> {
  const received: Received[] = [];
  let queue: Answer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: 0 };
      received.push(r);
      const a = queue.shift() ?? { status: 200 };
      if (a === 'hang') return;
      r.answered = a.status;
      res.writeHead(a.status, { 'content-type': 'text/plain', ...(a.retryAfter ? { 'retry-after': a.retryAfter } : {}) }).end(a.status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    script: (answers) => {
      queue = [...answers];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
