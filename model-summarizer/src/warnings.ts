/**
 * Warnings from a summarizer (the model failed and the fallback wrote the summary, the summary
 * was trimmed) delivered into the warnings of the compaction run that asked for the summary.
 * A summarizer never sees the run, so the relay matches each warning to its run by the
 * messages the request carried.
 */
import type { CompactionRun, Compactor, MessageFacts, SummarizeRequest } from "@compaction/core";

/** Receives a summarizer's warning, with the request it concerns. */
export type SummarizerWarn = (message: string, request: SummarizeRequest) => void;

/** After every other `summarize` tap, so warnings of summaries any plugin asked for are delivered. */
export const SUMMARIZER_WARNINGS_STAGE = Number.MAX_SAFE_INTEGER;

/**
 * A SummarizerWarn whose warnings appear in `result.warnings` of the run whose messages the
 * request summarised, prefixed with `[plugin]`. Taps `compactor.hooks.summarize` (as `plugin`,
 * at SUMMARIZER_WARNINGS_STAGE) to deliver them; concurrent runs over different messages each get
 * their own warnings.
 */
export function relaySummarizerWarnings(compactor: Compactor<any>, plugin: string): SummarizerWarn {
  // Keyed by the facts of the request's first message: the run's FactsCache hands out one facts
  // object per message, so the run that owns the message finds its warnings.
  const pending = new WeakMap<MessageFacts, string[]>();
  const unmatched: string[] = [];
  compactor.hooks.summarize.tap({ name: plugin, stage: SUMMARIZER_WARNINGS_STAGE }, (draft, run) => {
    deliver(run, pending, unmatched);
    return draft;
  });
  return (message, request) => {
    const key = request.messages[0];
    if (key === undefined) {
      unmatched.push(message);
      return;
    }
    const list = pending.get(key);
    if (list) list.push(message);
    else pending.set(key, [message]);
  };
}

function deliver(run: CompactionRun<any>, pending: WeakMap<MessageFacts, string[]>, unmatched: string[]): void {
  const seen = new Set<MessageFacts>();
  const take = (facts: MessageFacts) => {
    if (seen.has(facts)) return;
    seen.add(facts);
    const list = pending.get(facts);
    if (list === undefined) return;
    pending.delete(facts);
    for (const message of list) run.warn(message);
  };
  for (const facts of run.view.facts) take(facts);
  for (const message of run.input.messages) take(run.factsOf(message));
  for (const message of unmatched.splice(0)) run.warn(message);
}
