// How the cells of one response were read: what a reader records and the write path judges
// (fetch/understood.ts says what the judgement is).
interface ColumnCount {
  read: number;
  unreadable: number;
}

/** How the cells of one response were read, per upstream column. */
export class CellTally {
  private readonly columns = new Map<string, ColumnCount>();
  private badTimes = 0;
  private standaloneUnreadable = 0;
  private readonly misreadings: string[] = [];

  /** A cell of a table column that is read as a number (`ok`: a number or null). */
  column(key: string, ok: boolean): void {
    let c = this.columns.get(key);
    if (!c) this.columns.set(key, (c = { read: 0, unreadable: 0 }));
    if (ok) c.read++;
    else c.unreadable++;
  }

  /** A numeric field outside a table (a MetricValue, a screener cell). */
  cell(ok: boolean): void {
    if (!ok) this.standaloneUnreadable++;
  }

  /** A row's time (x) cell that could not be read. */
  badTime(): void {
    this.badTimes++;
  }

  /** Another sign that the shape was not understood (e.g. values that line up with no time). */
  misread(reason: string): void {
    this.misreadings.push(reason);
  }

  get unreadable(): number {
    let n = this.standaloneUnreadable;
    for (const c of this.columns.values()) n += c.unreadable;
    return n;
  }

  /** Why the response cannot have been understood, or null. */
  refusal(): string | null {
    if (this.misreadings.length > 0) return this.misreadings.join('; ');
    if (this.badTimes > 0) return `${this.badTimes} row(s) with a time that cannot be read`;
    const notNumeric = [...this.columns].filter(([, c]) => c.read === 0 && c.unreadable > 0).map(([k]) => k);
    if (notNumeric.length > 0) return `column(s) ${notNumeric.map((k) => `"${k}"`).join(', ')} read as numeric, but no cell is a number`;
    return null;
  }

  /** The counts kept in the resource's state. */
  summary(): { unreadableCells: number; unreadableByColumn: Record<string, number> } {
    const byColumn: Record<string, number> = {};
    for (const [k, c] of this.columns) if (c.unreadable > 0) byColumn[k] = c.unreadable;
    if (this.standaloneUnreadable > 0) byColumn['(fields)'] = this.standaloneUnreadable;
    return { unreadableCells: this.unreadable, unreadableByColumn: byColumn };
  }
}
