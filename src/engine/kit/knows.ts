// What a resource needs to know of the warehouse before it reads, as questions. A question is
// declared once, in a file of its own beside the resources that ask it
// (src/resources/<source>/knows/): its name, how the warehouse answers it, and the type of the
// answer. A job names the questions it asks (`JobDefinition.knows`); the engine asks them
// before the fetch (job/knowledge.ts `gatherKnown`) and hands the answers to the pure read as
// data (`ReadInput.known`). A read never reaches the warehouse, and a new question is one new
// file: the engine and the store name none.
import type { Warehouse } from '../../store/connection.ts';

/** What a question's answer may use of the warehouse: its queries; it writes nothing. */
export type WarehouseReads = Pick<Warehouse, 'db' | 'query'>;

/** One question a resource asks of the warehouse, asked with an `A`, answered with a `T`. */
export interface Question<A, T> {
  /** Its answer's key in `Knowledge`: one name, one question. */
  readonly name: string;
  /** How the warehouse answers it: run by the engine before the read, never by the read. */
  answer(warehouse: WarehouseReads, arg: A): Promise<T>;
  /** The question asked with `arg`: what a job's `knows` returns. */
  ask(arg: A): Asked;
  /** Its answer among what the read was handed (undefined: not asked). */
  answerIn(known: Knowledge): T | undefined;
}

/** A question asked, with what it is asked with. */
export interface Asked {
  readonly question: Question<any, unknown>;
  readonly arg: unknown;
}

/** The questions a job asks before it reads (none: an empty list). */
export type KnownAsk = readonly Asked[];

/** The warehouse's answers to a KnownAsk, by each question's name (a question not asked is absent). */
export type Knowledge = Readonly<Record<string, unknown>>;

/** Declares a question by its name and how the warehouse answers it; the answer's type is the question's. */
export function question<A = void, T = unknown>(name: string, answer: (warehouse: WarehouseReads, arg: A) => Promise<T>): Question<A, T> {
  const q: Question<A, T> = {
    name,
    answer,
    ask: (arg) => ({ question: q, arg }),
    answerIn: (known) => known[name] as T | undefined,
  };
  return q;
}
