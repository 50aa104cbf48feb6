// A request its walk stops (Ctrl-C, SIGTERM, a lost lock) while it waits for an answer: cut
// short at once, recorded as stopped (not as the network's failure), not tried again.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunInterrupted } from '../../src/engine/run/close-run.ts';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, MemoryRecorder } from '../../src/upstream/index.ts';
import { STOPPED_REQUEST } from '../../src/ports/recorder.ts';
import { createTestLogger } from '../helpers/services.ts';
import { waitFor } from '../helpers/workers.ts';

describe('a request stopped with its walk', () => {
  let server: Server;
  let url: string;
  let received = 0;
  beforeAll(async () => {
    // Answers nothing: every request waits until it is cut short.
    server = createServer(() => {
      received++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is aborted at once, recorded `stopped: …` without a status, and not retried', async () => {
    const recorder = new MemoryRecorder();
    const upstream = createUpstream({
      // Its timeout is an hour away: what ends it is the stop.
      config: { app: { url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: 3600_000, maxResponseBytes: 1e6, maxAttempts: 5, maxRateWaitMs: 10_000 },
      budget: new InProcessBudget(),
      recorder,
      logger: createTestLogger().logger,
      retry: FAST_RETRY_POLICY,
    });
    const stop = new AbortController();
    const asked = upstream.get({ route: 'app.tokens', signal: stop.signal }).catch((e: unknown) => e);
    await waitFor('the request to reach the server', () => received === 1 || undefined, 5_000, 10);
    stop.abort(new RunInterrupted('SIGINT'));
    const err = await asked;
    expect(err).toBeInstanceOf(RunInterrupted);
    expect(recorder.requests).toHaveLength(1);
    expect(recorder.requests[0]).toMatchObject({ attempt: 1, httpStatus: null, error: `${STOPPED_REQUEST}interrupted by SIGINT` });
  });
});
