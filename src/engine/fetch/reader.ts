// A resource's reader run (kit/declaration.ts `Reader`): the engine sends what the reader asks, one
// request after another on the job's budget, validates each response, reads every page of a list,
// asks again whole when upstream refuses a date filter, and hands what came back to the reader's
// pure read.
// The read's refusal comes back as a value; only what the edge cannot read (a body that is no
// envelope, a list whose pages disagree) is refused here, as before, by the fetch itself.
import { z } from 'zod';
import { ProblemError } from '../../lib/errors.ts';
import { fetchData, invalid } from './fetch.ts';
import { fetchList } from './fetch-list.ts';
import { judgeItems, judgeResponse } from './judge-items.ts';
import type { UpstreamRequest } from '../../upstream/index.ts';
import type { Ask, Fetched, Got, Incremental, JobContext, Outcome, ReadInput, Refusal, Reader } from '../kit/types.ts';

/** Asks of one reader at most: a reader that keeps asking is refused, never followed for ever. */
export const MAX_ASKS = 200;

/** `first`: what the reader asks first, when its job's declaration read said so already (`Declared.asks`). */
export async function runReader<P>(ctx: JobContext, reader: Reader<P>, input: ReadInput<P>, first?: Ask[]): Promise<Outcome | Refusal> {
  const got: Got[] = [];
  let asks = first ?? reader.asks(input);
  while (asks.length > 0) {
    for (const ask of asks) {
      if (got.length >= MAX_ASKS) return { refused: `the reader asked more than ${MAX_ASKS} requests` };
      got.push(await send(ctx, ask));
    }
    asks = reader.more?.(input, got) ?? [];
  }
  return reader.read(input, got);
}

/** One Ask sent and validated; a problem the Ask declares an answer is handed on as data. */
async function send(ctx: JobContext, ask: Ask): Promise<Got> {
  try {
    return await fetchAsk(ctx, ask);
  } catch (err) {
    if (err instanceof ProblemError && isAnswer(ask, err)) return { ask, problem: err, incremental: false };
    throw err;
  }
}

function isAnswer(ask: Ask, err: ProblemError): boolean {
  const a = ask.answers;
  if (!a) return false;
  return a.any === true || (a.statuses?.includes(err.status) ?? false) || (err.code !== undefined && (a.codes?.includes(err.code) ?? false));
}

async function fetchAsk(ctx: JobContext, ask: Ask): Promise<Got> {
  const schema = ask.schema ?? z.unknown();
  const req = { route: ask.route, ...(ask.params ? { params: ask.params } : {}), ...(ask.query ? { query: ask.query } : {}) };
  if (ask.document) {
    const response = await ctx.upstream.get({ ...req, ...(ask.link ? { link: ask.link } : {}), runId: ctx.runId });
    ctx.findings.received({ route: ask.route, response });
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) throw invalid(ctx, ask.route, response, `not the document its route serves: ${parsed.error.issues[0]?.message ?? 'unreadable'}`);
    return { ask, response, incremental: false };
  }
  if (ask.list) {
    const { listOf, ...options } = ask.list;
    // Its items may be refused one by one: strings Postgres cannot hold come back located.
    const list = await fetchList(ctx, { ...req, refusableItems: true }, schema, listOf, options);
    return { ask, list: judgeItems(ctx, ask.route, list, schema, listOf), incremental: false };
  }
  if (ask.since) {
    const { fetched, incremental } = await fetchSince(ctx, ask.since.incremental, req, schema, ask.since.from);
    return { ask, fetched, incremental };
  }
  if (ask.items) {
    // Its items may be refused one by one, as a list's are: strings Postgres cannot hold come back located.
    const fetched = await fetchData(ctx, { ...req, ...(ask.link ? { link: ask.link } : {}), refusableItems: true }, schema);
    return { ask, fetched: judgeResponse(ctx, ask.route, fetched, ask.items), incremental: false };
  }
  return { ask, fetched: await fetchData(ctx, { ...req, ...(ask.link ? { link: ask.link } : {}) }, schema), incremental: false };
}

/** One request from `since` (none: whole); a filter upstream refuses is asked again whole. */
export async function fetchSince<S extends z.ZodType>(
  ctx: JobContext,
  inc: Incremental,
  req: Omit<UpstreamRequest, 'runId'>,
  schema: S,
  since: string | null,
): Promise<{ fetched: Fetched<z.output<S>>; incremental: boolean }> {
  const ask = (from: string | null) => fetchData(ctx, from ? { ...req, query: { ...req.query, [inc.param(ctx.settings)]: from } } : req, schema);
  if (since === null) return { fetched: await ask(null), incremental: false };
  try {
    return { fetched: await ask(since), incremental: true };
  } catch (err) {
    if (!(err instanceof ProblemError && err.code && inc.refusedCodes.includes(err.code))) throw err;
    ctx.logger.info({ code: err.code }, 'date filter refused; fetching the whole resource');
    return { fetched: await ask(null), incremental: false };
  }
}
