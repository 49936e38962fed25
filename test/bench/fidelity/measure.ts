/**
 * Whether each fact survived: in the context (its needle is in the text of some message the
 * model is sent, summaries and notes included: the request as shaped, so a needle that only
 * stood in the part of a message shrinking cut out is not in context), found by `memory_search`
 * (a top-5 hit's entry holds the needle), or lost (neither).
 */
import type { PiMessage } from "@compaction/core";
import { messageText, openRecallIndex } from "@compaction/plugin-recall";
import type { Fact } from "./facts.js";

/** The texts of the entries a search returns, best first. */
export type Search = (query: string) => Promise<readonly string[]>;

export interface FactOutcome {
  readonly fact: Fact;
  /** In the request sent. */
  readonly inContext: boolean;
  /** In the context the host holds (the same as `inContext` when no held context was given). */
  readonly inHeldContext: boolean;
  /** null when no search was run. */
  readonly found: boolean | null;
}

/** Shares of one kind of fact, as counts out of `total`. */
export interface KindShares {
  readonly kind: string;
  readonly total: number;
  readonly inContext: number;
  /** null when no search was run. */
  readonly found: number | null;
  readonly lost: number;
}

/** What the model reads of each message: its text, tool call names and arguments, a tool result's tool. */
export function contextTexts(context: readonly PiMessage[]): string[] {
  return context.map((message) => messageText(message));
}

/**
 * Checks every fact against the final request sent (`sent`), the context held (`held`, when it
 * differs: the request before shaping) and, when given, the search.
 */
export async function measureFacts(facts: readonly Fact[], sent: readonly PiMessage[], search: Search | null, held: readonly PiMessage[] = sent): Promise<FactOutcome[]> {
  const texts = contextTexts(sent);
  const heldTexts = held === sent ? texts : contextTexts(held);
  const outcomes: FactOutcome[] = [];
  for (const fact of facts) {
    const inContext = texts.some((text) => text.includes(fact.needle));
    const inHeldContext = heldTexts.some((text) => text.includes(fact.needle));
    const found = search === null ? null : (await search(fact.query)).some((text) => text.includes(fact.needle));
    outcomes.push({ fact, inContext, inHeldContext, found });
  }
  return outcomes;
}

/**
 * Facts cut out of what is sent along the way: for each shaped request, the facts whose needle is
 * in the context held but not in the request sent (shrunk to head and tail, or left out). Feed it
 * the replay's `onShaped`; `cut` counts, per fact, the requests that lacked it.
 */
export class ShapingLosses {
  readonly cut = new Map<Fact, number>();
  constructor(private readonly facts: readonly Fact[]) {}

  observe(held: readonly PiMessage[], sent: readonly PiMessage[]): void {
    const heldTexts = contextTexts(held);
    const sentTexts = contextTexts(sent);
    for (const fact of this.facts) {
      if (!heldTexts.some((text) => text.includes(fact.needle))) continue;
      if (sentTexts.some((text) => text.includes(fact.needle))) continue;
      this.cut.set(fact, (this.cut.get(fact) ?? 0) + 1);
    }
  }
}

/** Counts per kind, in the order of `kinds` (kinds with no fact are left out), then "all". */
export function sharesByKind(outcomes: readonly FactOutcome[], kinds: readonly string[]): KindShares[] {
  const rows: KindShares[] = [];
  const tally = (kind: string, of: readonly FactOutcome[]): KindShares => ({
    kind,
    total: of.length,
    inContext: of.filter((o) => o.inContext).length,
    found: of.some((o) => o.found === null) ? null : of.filter((o) => o.found === true).length,
    lost: of.filter((o) => !o.inContext && o.found !== true).length,
  });
  for (const kind of kinds) {
    const of = outcomes.filter((o) => o.fact.kind === kind);
    if (of.length > 0) rows.push(tally(kind, of));
  }
  rows.push(tally("all", outcomes));
  return rows;
}

/** A recall index over the session file and a Search over it: the whole entries of the top `limit` hits. */
export async function recallSearch(sessionPath: string, limit = 5): Promise<{ search: Search; close: () => Promise<void> }> {
  const index = await openRecallIndex(sessionPath, { autoUpdate: false });
  const search: Search = async (query) => {
    const hits = await index.search(query, { limit });
    const texts: string[] = [];
    for (const hit of hits) texts.push((await index.get(hit.entryId))?.text ?? "");
    return texts;
  };
  return { search, close: async () => void (await index.close()) };
}
