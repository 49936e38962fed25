/** Conversations and compactors for safeguard's tests, the same in every message format. */
import {
  type CompactionPlugin,
  Compactor,
  type MessageFacts,
  type SummarizeRequest,
  type Summarizer,
  createEstimateCounter,
} from "@compaction/core";
import { type Builders, type Format, builders, words } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";

export type Message = unknown;

export interface TurnSpec {
  /** Words of the user's request (default 10). */
  readonly askWords?: number;
  /** Words of each tool result (default 10). */
  readonly outputWords?: number;
  /** File the turn edits (default `src/file-<n>.ts`). */
  readonly edits?: string;
  /** File the turn reads first. */
  readonly reads?: string;
  /** The edit fails. */
  readonly editFails?: boolean;
}

/**
 * One turn `n`: the user asks, the assistant reads a file (when `reads`), edits one, and reports.
 * Tool-call ids are unique per `n`.
 */
export function turn(b: Builders, n: number, spec: TurnSpec = {}): Message[] {
  const path = spec.edits ?? `src/file-${n}.ts`;
  const output = words(spec.outputWords ?? 10, "output");
  const messages: Message[] = [b.user(`Task ${n}: update ${path}. ${words(spec.askWords ?? 10, "detail")}`)];
  if (spec.reads !== undefined) {
    messages.push(b.assistant(`Reading ${spec.reads} first.`, [{ id: `r${n}`, name: "read", args: { path: spec.reads } }]));
    messages.push(...b.toolResults([{ id: `r${n}`, text: output, name: "read" }]));
  }
  messages.push(b.assistant(`Editing ${path} now.`, [{ id: `e${n}`, name: "edit", args: { path, oldText: "a", newText: "b" } }]));
  messages.push(
    ...b.toolResults([
      spec.editFails === true
        ? { id: `e${n}`, text: `Error: could not find the text to replace in ${path}`, isError: true, name: "edit" }
        : { id: `e${n}`, text: output, name: "edit" },
    ]),
  );
  messages.push(b.assistant(`Updated ${path} for task ${n}.`));
  return messages;
}

/** Turns `from` to `to - 1` of plain chat: a question and an answer each, no tool calls. */
export function chat(b: Builders, from: number, to: number): Message[] {
  const out: Message[] = [];
  for (let n = from; n < to; n++) out.push(b.user(`Question ${n}: ${words(10, "why")}`), b.assistant(`Answer ${n}: ${words(20, "because")}`));
  return out;
}

/** Turns `from` to `to - 1`. */
export function turns(b: Builders, from: number, to: number, spec: TurnSpec = {}): Message[] {
  const out: Message[] = [];
  for (let n = from; n < to; n++) out.push(...turn(b, n, spec));
  return out;
}

export interface CompactorSpec {
  readonly plugins: readonly CompactionPlugin[];
  readonly summarizer?: Summarizer;
  readonly contextWindow?: number;
  readonly summaryMaxTokens?: number;
}

/** A compactor for `format` with the chars/4 estimate counter. */
export function compactorFor(format: Format, spec: CompactorSpec): Compactor<Message> {
  return new Compactor<Message>({
    adapter: builders(format).adapter,
    tokenCounter: createEstimateCounter(),
    plugins: spec.plugins,
    contextWindow: spec.contextWindow ?? 1_000_000,
    summarizer: spec.summarizer ?? createExtractiveSummarizer(),
    ...(spec.summaryMaxTokens !== undefined ? { summaryMaxTokens: spec.summaryMaxTokens } : {}),
  });
}

/** A summarizer that records its requests and answers with a short line naming them. */
export function recordingSummarizer(answer?: (request: SummarizeRequest, call: number) => string | Promise<string>) {
  const requests: SummarizeRequest[] = [];
  const summarizer: Summarizer = {
    name: "recorder",
    async summarize(request) {
      requests.push(request);
      if (answer !== undefined) return answer(request, requests.length);
      return `${request.kind} summary ${requests.length} of ${request.messages.length} messages`;
    },
  };
  return { requests, summarizer };
}

/** Tokens of the messages from `index` on, as the compactor counts them. */
export function suffixTokens(compactor: Compactor<Message>, messages: readonly Message[], index: number): number {
  return compactor.tokens.total(messages.slice(index));
}

/** The facts of each message, through the compactor's cache. */
export function factsOf(compactor: Compactor<Message>, messages: readonly Message[]): MessageFacts[] {
  return messages.map((m) => compactor.facts.of(m));
}

/** Ids of tool results whose call is not among the earlier messages. */
export function orphanedResults(facts: readonly MessageFacts[]): string[] {
  const issued = new Set<string>();
  const orphans: string[] = [];
  for (const f of facts) {
    for (const id of f.toolResultIds) if (!issued.has(id)) orphans.push(id);
    for (const call of f.toolCalls) issued.add(call.id);
  }
  return orphans;
}

