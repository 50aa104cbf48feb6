// The export's lanes: a few writers (parquet.ts) and the tasks waiting for one. A task streams
// its rows out of Postgres (a COPY on a connection of its own) into its writer (transfer.ts),
// so a lane keeps a Postgres backend printing and a DuckDB thread writing at once; Postgres
// prints slower than DuckDB writes, and on two cores two lanes keep both busy
// (docs/performance.md, "Export").
import { ParquetWriter } from './parquet.ts';

export const LANES = 2;

export class Lanes {
  private readonly free: ParquetWriter[] = [];
  private readonly all: ParquetWriter[] = [];
  private opening = 0;
  /** Tasks waiting for a writer; null: a writer failed to open, try opening one again. */
  private readonly waiting: ((w: ParquetWriter | null) => void)[] = [];

  private constructor(private readonly count: number) {}

  /** Lanes whose writers open when a task first needs one: an export with nothing new opens none (some 30-60 ms each). */
  static async open(count = LANES): Promise<Lanes> {
    return new Lanes(count);
  }

  /** Runs `task` on the next free writer. */
  async run<T>(task: (writer: ParquetWriter) => Promise<T>): Promise<T> {
    const writer = await this.take();
    try {
      return await task(writer);
    } finally {
      const next = this.waiting.shift();
      if (next) next(writer);
      else this.free.push(writer);
    }
  }

  private async take(): Promise<ParquetWriter> {
    const free = this.free.pop();
    if (free) return free;
    if (this.all.length + this.opening >= this.count) return (await new Promise<ParquetWriter | null>((resolve) => this.waiting.push(resolve))) ?? this.take();
    this.opening++;
    try {
      const writer = await ParquetWriter.open();
      this.all.push(writer);
      return writer;
    } catch (err) {
      this.waiting.shift()?.(null);
      throw err;
    } finally {
      this.opening--;
    }
  }

  close(): void {
    for (const w of this.all) w.close();
  }
}

/**
 * Pure: the days to write split into at most `lanes` runs of consecutive days, of about as many
 * rows each; a split only when each part would hold at least `minRows` rows (a day or two is
 * one task: a split costs a COPY and a writer's start).
 */
export function splitDays(days: readonly { day: string; rows: number }[], lanes: number, minRows: number): string[][] {
  const total = days.reduce((n, d) => n + d.rows, 0);
  const parts = Math.max(1, Math.min(lanes, days.length, Math.floor(total / Math.max(1, minRows))));
  const out: string[][] = [];
  let current: string[] = [];
  let rows = 0;
  for (const [i, d] of days.entries()) {
    current.push(d.day);
    rows += d.rows;
    const left = days.length - i - 1;
    const partsLeft = parts - out.length - 1;
    if (partsLeft > 0 && left >= partsLeft && rows >= (total * (out.length + 1)) / parts - d.rows / 2) {
      out.push(current);
      current = [];
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}
