// A GET that names the Host it likes (fetch sets its own): what a browser on a rebinding
// page, a proxy or a scraper sends a status page. A connection of its own each (no agent), so
// a burst is that many sockets in flight at once.
import { request } from 'node:http';

export interface Answer {
  status: number;
  /** The Content-Type header, as a string ('undefined' when none). */
  type: string;
  body: string;
}

/** GET `path` on `address`:`port`, naming `host` in the Host header (default: the address and port). */
export function getNaming(port: number, path: string, host?: string, address = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: address, port, path, agent: false, ...(host !== undefined ? { headers: { host } } : {}) }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    })
      .on('error', reject)
      .end();
  });
}
