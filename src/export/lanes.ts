// The export's lanes: a few writers (parquet.ts) and the tasks waiting for one. A task reads
// its rows out of Postgres (a COPY on a connection of its own) and hands them to its writer,
// so while one lane's writer is busy in DuckDB the other's COPY keeps Postgres busy: on two
// cores, two lanes keep both busy (docs/performance.md, "Export").
import { ParquetWriter } from './parquet.ts';

export const LANES = 2;

export class Lanes {
  private readonly waiting: ((w: ParquetWriter) => void)[] = [];

  private constructor(private readonly free: ParquetWriter[], private readonly all: readonly ParquetWriter[]) {}

  static async open(count = LANES): Promise<Lanes> {
    const writers: ParquetWriter[] = [];
    try {
      for (let i = 0; i < count; i++) writers.push(await ParquetWriter.open());
    } catch (err) {
      for (const w of writers) w.close();
      throw err;
    }
    return new Lanes([...writers], writers);
  }

  /** Runs `task` on the next free writer. */
  async run<T>(task: (writer: ParquetWriter) => Promise<T>): Promise<T> {
    const writer = this.free.pop() ?? (await new Promise<ParquetWriter>((resolve) => this.waiting.push(resolve)));
    try {
      return await task(writer);
    } finally {
      const next = this.waiting.shift();
      if (next) next(writer);
      else this.free.push(writer);
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
