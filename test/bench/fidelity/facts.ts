/** What the fidelity benchmark looks for: facts with an exact needle and a query that does not contain it. */

/** Fact kinds of the synthetic sessions, in table order. */
export const SYNTHETIC_KINDS = ["constraint", "decision", "identifier", "error", "lastRequest"] as const;

/** Fact kinds taken from the real transcripts, in table order. */
export const REAL_KINDS = ["path", "command", "error", "lastRequest"] as const;

/** Where in the session a fact was stated. */
export type FactPosition = "early" | "mid" | "late" | "end";

export interface Fact {
  /** The kind it is reported under (a column group of the table). */
  readonly kind: string;
  /** What exactly it is: `port`, `path`, `hash`, `url` for identifiers; the tool for real facts. */
  readonly detail: string;
  /** The exact text that must survive: found verbatim in the context, or in a search hit's entry. */
  readonly needle: string;
  /** What an agent would search for: words around the fact, never the needle itself. */
  readonly query: string;
  /** Index of the message that states it, in the replayed message list. */
  readonly messageIndex: number;
  readonly position: FactPosition;
}
