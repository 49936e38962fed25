/**
 * Shared by the never-stuck tests and the soak benchmark: the invariants of issue 10 checked on
 * what a context manager sends, for any message format.
 */
import type { ContextManager } from "@compaction/context-manager";
import { FactsCache, type MessageAdapter } from "@compaction/core";

export const PRESETS = ["safeguard", "rolling", "layered", "sliding-window"] as const;
export type PresetName = (typeof PRESETS)[number];

/** What is wrong with a request about to be sent: orphaned results, unanswered Anthropic tool_use, a missing request. */
export function requestProblems<T>(
  adapter: MessageAdapter<T>,
  sent: readonly T[],
  newestUserText: string | undefined,
): string[] {
  const facts = new FactsCache(adapter);
  const problems: string[] = [];
  const issued = new Set<string>();
  sent.forEach((message, i) => {
    const f = facts.of(message);
    for (const id of f.toolResultIds) if (!issued.has(id)) problems.push(`message ${i}: tool result ${id} without its call`);
    for (const call of f.toolCalls) issued.add(call.id);
    // Anthropic: every tool_use is answered in the very next user message.
    if (adapter.name === "anthropic" && f.toolCalls.length > 0) {
      const next = sent[i + 1];
      const answered = new Set(next === undefined ? [] : facts.of(next).toolResultIds);
      if (next !== undefined) for (const call of f.toolCalls) if (!answered.has(call.id)) problems.push(`message ${i}: tool_use ${call.id} not answered in the next message`);
    }
  });
  if (newestUserText !== undefined) {
    // A user message, whole or cut to head and tail; or, for a split newest turn in a host that
    // records only summary + suffix, its text carried in the summary.
    const present = sent.some((m) => {
      const f = facts.of(m);
      if (f.kind === "summary") return f.text.includes(newestUserText);
      return f.kind === "user" && (f.text === newestUserText || sameHeadAndTail(f.text, newestUserText));
    });
    if (!present) problems.push(`the newest user message (${JSON.stringify(newestUserText.slice(0, 40))}) is not in the request`);
  }
  return problems;
}

/** A shrunk request: its head and tail are the original's. */
function sameHeadAndTail(shrunk: string, original: string): boolean {
  const at = shrunk.indexOf("\n[compaction: ");
  if (at < 0) return false;
  const end = shrunk.indexOf("]\n", at);
  const head = shrunk.slice(0, at);
  const tail = end < 0 ? "" : shrunk.slice(end + 2);
  return original.startsWith(head) && original.endsWith(tail);
}

/**
 * True when the context holds `request` as its newest user message, or, for a split newest turn
 * in a host that records only summary + suffix, in the summary (the summarizer's own words, or
 * carried under CARRIED_REQUEST_HEADING) with no user message after it.
 */
export function holdsNewestRequest<T>(manager: ContextManager<T>, request: string): boolean {
  const messages = manager.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const f = manager.compactor.facts.of(messages[i] as T);
    if (f.kind === "user") return f.text === request;
    if (f.kind === "summary") return f.text.includes(request);
  }
  return false;
}
