// One job's reading of its resource: its reader run (fetch/reader.ts), the rows prepared for writing,
// and once what that reader read is refused as not understood, on reading or on preparing, its
// declared alternative, which then stays the reader (a confirming read runs it again). A
// refusal is a value from the read to here; its bodies are kept `invalid` where it is made.
// Reading visits no store: what it needs of the warehouse was answered before the fetch
// (job-input.ts `outset`), and what its rows need of it is done in the commit (commit.ts).
import type { NotUnderstoodError } from '../../lib/errors.ts';
import { prepareUpsert, type PreparedUpsert } from '../../store/write/upsert.ts';
import { sameBodyAsWritten } from './change.ts';
import { linkProvisionally, type BodyLinks } from './provenance.ts';
import { refuse } from '../fetch/understood.ts';
import { runReader } from '../fetch/reader.ts';
import type { Ask, Declared, JobContext, JobDefinition, Outcome, ReadInput, Reader, SyncSettings, TableWrite } from '../kit/types.ts';

export interface Prepared {
  /** Per write, in order. */
  upserts: PreparedUpsert[];
  /** The bodies the writes were read from, linked provisionally (provenance.ts). */
  links: BodyLinks;
}

/** An outcome read and ready to write. */
export interface Read {
  o: Outcome;
  prepared: Prepared;
}

/** A reading refused for good: its bodies are kept `invalid` already; `error` is what the job records. */
export interface Refused {
  refused: string;
  error: NotUnderstoodError;
}

export class Reading {
  private refusal: string | undefined;
  private onAlternative: boolean;
  /** The reader the try started with, and what its declaration read said it asks first. */
  private readonly first: { reader: Reader<any>; asks: Ask[] };

  constructor(
    private readonly ctx: JobContext,
    private readonly job: JobDefinition<any>,
    private readonly input: ReadInput<any>,
    declared: Pick<Declared, 'alternativeFirst' | 'asks'>,
  ) {
    this.onAlternative = job.alternative !== undefined && declared.alternativeFirst;
    this.first = { reader: this.onAlternative ? job.alternative! : job.reader, asks: declared.asks };
  }

  /** Reads and prepares with the reader taken; a refusal on the first reader turns to the alternative, once. */
  async next(): Promise<Read | Refused> {
    for (;;) {
      const reader = this.onAlternative ? this.job.alternative! : this.job.reader;
      // The reader the try started with asks what its declaration read said (no call of its own).
      const asks = reader === this.first.reader && this.refusal === undefined ? this.first.asks : undefined;
      const read = await runReader(this.ctx, reader, this.refusal === undefined ? this.input : { ...this.input, refusal: this.refusal }, asks);
      const result = 'refused' in read ? read : this.prepared(read);
      if (!('refused' in result)) return result;
      const error = refuse(this.ctx, result.refused);
      if (this.onAlternative || this.job.alternative === undefined) return { refused: result.refused, error };
      this.ctx.logger.info({ reason: error.message }, 'not understood; trying the other way to the same rows');
      this.refusal = error.message;
      this.onAlternative = true;
    }
  }

  private prepared(read: Outcome): Read | { refused: string } {
    for (const n of read.notes ?? []) this.ctx.logger[n.level](n.fields, n.msg);
    const { job, ctx, input } = this;
    const o = (job.rowsFromBodyAlone && !input.settings.full && sameBodyAsWritten(input.state, read)) || read;
    const prepared = prepare(ctx.findings.understood, ctx.settings, o);
    return 'refused' in prepared ? prepared : { o, prepared };
  }
}

/**
 * Pure: everything before the transaction: the tally judged, rows linked to the bodies they
 * were read from (`read`: the responses understood, in order), each write deduplicated and
 * ordered (rows that contradict each other: the response was read wrongly, refused).
 */
export function prepare(read: Parameters<typeof linkProvisionally>[0], settings: Pick<SyncSettings, 'batchSize'>, o: Outcome): Prepared | { refused: string } {
  const refusal = o.cells?.refusal();
  if (refusal) return { refused: refusal };
  const writes = (o.writes ?? []) as TableWrite[];
  const links = linkProvisionally(read, writes);
  const upserts: PreparedUpsert[] = [];
  for (const w of writes) {
    const prepared = prepareUpsert(w.table, w.rows, { keep: w.keep, batchSize: settings.batchSize });
    if ('refused' in prepared) return prepared;
    upserts.push(prepared);
  }
  return { upserts, links };
}
