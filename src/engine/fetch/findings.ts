// What one try of one job has read, carried by its context (runJob gives each try its own):
// the responses in order, those understood (the bodies its rows link to), and what is kept of
// them once the try ends (the fields each understood response carried, the bodies refused).
// Reading a response writes nothing; the lifecycle hands the findings to the store at the end.
import type { FieldSighting } from '../../store/books/field-drift.ts';
import type { InvalidBody } from '../../store/books/request-log.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';

export interface ReadResponse {
  route: UpstreamRequest['route'];
  response: UpstreamResponse;
}

export class TryFindings {
  /** Read since the last refusal took them (what went before was judged already). */
  private unjudged: ReadResponse[] = [];
  /** Every response understood, in order: the bodies the rows come from. */
  readonly understood: UpstreamResponse[] = [];
  /** The fields of each understood response, for the drift record. */
  readonly sightings: FieldSighting[] = [];
  /** Bodies refused, to keep as `invalid` as served: their raw text, and their bytes where the text does not say them exactly. */
  readonly refused: InvalidBody[] = [];
  /** Every response received, in order, judged or not: the bodies the try used (its write record). */
  readonly responses: UpstreamResponse[] = [];
  /** Whether the try's write committed, with its record (store/books/write-record.ts). */
  written = false;

  received(r: ReadResponse): void {
    this.unjudged.push(r);
    this.responses.push(r.response);
  }

  /** The responses read since the last call. */
  takeReceived(): ReadResponse[] {
    const list = this.unjudged;
    this.unjudged = [];
    return list;
  }
}
