// One job's reading of its resource: its reader run (fetch/reader.ts), the rows prepared for writing,
// and once what that reader read is refused as not understood, on reading or on preparing, its
// declared alternative, which then stays the reader (a confirming read runs it again). A
// refusal is a value from the read to here; its bodies are kept `invalid` where it is made.
import type { NotUnderstoodError } from '../../lib/errors.ts';
import { prepareUpsert, type PreparedUpsert } from '../../store/write/upsert.ts';
import { WarehouseClock } from '../../store/warehouse-clock.ts';
import { sameBodyAsWritten } from './change.ts';
import { linkToBodies } from './provenance.ts';
import { refuse } from '../fetch/understood.ts';
import { runReader } from '../fetch/reader.ts';
import type { JobContext, JobDefinition, Outcome, ReadInput, Source, TableWrite } from '../kit/types.ts';

export interface Prepared {
  /** Per write, in order. */
  upserts: PreparedUpsert[];
  /** Per write, the archived body it was read from (null: none archived). */
  bodies: (number | null)[];
}

/** An outcome read and ready to write; `receivedAt`: when its responses were in, on the server's clock. */
export interface Read {
  o: Outcome;
  prepared: Prepared;
  receivedAt: Date;
}

/** A reading refused for good: its bodies are kept `invalid` already; `error` is what the job records. */
export interface Refused {
  refused: string;
  error: NotUnderstoodError;
}

export class Reading {
  private refusal: string | undefined;
  private onAlternative: boolean;

  constructor(
    private readonly ctx: JobContext,
    private readonly job: JobDefinition<any>,
    private readonly input: ReadInput<any>,
  ) {
    this.onAlternative = job.alternative !== undefined && (job.startsWithAlternative?.(input) ?? false);
  }

  /** Reads and prepares with the reader taken; a refusal on the first reader turns to the alternative, once. */
  async next(): Promise<Read | Refused> {
    for (;;) {
      const reader = this.onAlternative ? this.job.alternative! : this.job.reader;
      const read = await runReader(this.ctx, reader, this.refusal === undefined ? this.input : { ...this.input, refusal: this.refusal });
      // A replayed try's responses were received when its record says.
      const receivedAt = this.ctx.replaying?.at ?? (await WarehouseClock.read(this.ctx.warehouse.db));
      const result = 'refused' in read ? read : await this.prepared(read);
      if (!('refused' in result)) return { ...result, receivedAt };
      const error = refuse(this.ctx, result.refused);
      if (this.onAlternative || this.job.alternative === undefined) return { refused: result.refused, error };
      this.ctx.logger.info({ reason: error.message }, 'not understood; trying the other way to the same rows');
      this.refusal = error.message;
      this.onAlternative = true;
    }
  }

  private async prepared(read: Outcome): Promise<{ o: Outcome; prepared: Prepared } | { refused: string }> {
    for (const n of read.notes ?? []) this.ctx.logger[n.level](n.fields, n.msg);
    const { job, ctx, input } = this;
    const o = (job.rowsFromBodyAlone && !input.settings.full && sameBodyAsWritten(input.state, read)) || read;
    const prepared = await prepare(ctx, job.source, o);
    return 'refused' in prepared ? prepared : { o, prepared };
  }
}

/** Everything before the transaction: the tally judged, rows linked to their bodies, each write deduplicated, ordered and probed. */
export async function prepare(ctx: JobContext, source: Source, o: Outcome): Promise<Prepared | { refused: string }> {
  const refusal = o.cells?.refusal();
  if (refusal) return { refused: refusal };
  const bodies = await linkToBodies(ctx, source, (o.writes ?? []) as TableWrite[]);
  const upserts: PreparedUpsert[] = [];
  for (const w of (o.writes ?? []) as TableWrite[]) {
    const prepared = await prepareUpsert(ctx.warehouse.db, w.table, w.rows, { keep: w.keep, batchSize: ctx.settings.batchSize });
    // Rows that contradict each other: the response was read wrongly, so none of it is written.
    if ('refused' in prepared) return prepared;
    upserts.push(prepared);
  }
  return { upserts, bodies };
}
