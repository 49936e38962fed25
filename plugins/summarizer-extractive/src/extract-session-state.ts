/**
 * Builds a SessionState from any host's messages through its MessageAdapter, with the
 * extractive summarizer's machinery: the same facts, the same merging of earlier summaries,
 * the same summary text. Deterministic apart from `exportedAt`.
 */
import {
  CompactionError,
  ErrorCodes,
  FactsCache,
  fitToBudget,
  type LastExchange,
  type MessageAdapter,
  type MessageFacts,
  MessageTokenCounter,
  PENDING_PREFIX,
  RESPOND_PREFIX,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
  type SessionState,
  type SessionStateSource,
  type SummaryState,
  type TokenCounter,
  type ToolUsage,
} from "@compaction/core";
import { historyBlocks } from "./blocks.js";
import { extractFacts } from "./extract.js";
import { EXTRACTIVE_DEFAULT_LIMITS } from "./extractive.js";
import { ItemList } from "./item-list.js";
import { focusMatcher } from "./keywords.js";
import { historyState } from "./merge.js";

const SOURCE_FORMATS: readonly SessionStateSource["format"][] = ["pi", "claude-code", "codex", "messages"];

/** Default token cap of the `summary` field. */
export const DEFAULT_SUMMARY_MAX_TOKENS = 4000;

export interface ExtractSessionStateOptions {
  /** Where the messages came from; `messages` and `tokens` are filled in. */
  readonly source: Omit<SessionStateSource, "messages" | "tokens">;
  /** Counts `source.tokens` and fits `summary` under `summaryMaxTokens`. */
  readonly counter: TokenCounter;
  /** Most tokens of `summary`. Default 4000. */
  readonly summaryMaxTokens?: number;
  /** The export time; default now. */
  readonly now?: Date;
}

/**
 * The state of the session `messages` make up (a pi branch's context, an imported transcript,
 * or any message list). Summary messages among them (earlier compactions) are merged the way
 * the extractive summarizer merges them, so what they kept is kept.
 */
export function extractSessionState<T>(
  messages: readonly T[],
  adapter: MessageAdapter<T>,
  options: ExtractSessionStateOptions,
): SessionState {
  const summaryMaxTokens = validate(messages, adapter, options);
  const cache = new FactsCache(adapter);
  const facts = messages.map((message) => cache.of(message));
  const limits = EXTRACTIVE_DEFAULT_LIMITS;
  const extraction = extractFacts(facts, limits);
  const state = historyState(extraction);
  // As createExtractiveSummarizer: nothing to summarise gives an empty summary, not bare headings.
  const summary =
    facts.length === 0 ? "" : fitToBudget(historyBlocks(state, undefined, focusMatcher(undefined), limits), summaryMaxTokens, options.counter);
  const { slots } = state;
  const files = new Set([...slots.filesRead, ...slots.filesModified]);
  return {
    format: SESSION_STATE_FORMAT,
    version: SESSION_STATE_VERSION,
    exportedAt: (options.now ?? new Date()).toISOString(),
    source: {
      session: options.source.session,
      path: options.source.path,
      format: options.source.format,
      cwd: options.source.cwd,
      leafEntryId: options.source.leafEntryId,
      messages: messages.length,
      tokens: new MessageTokenCounter(cache, options.counter).total(messages),
    },
    goal: slots.goal.filter((goal) => !goal.startsWith(PENDING_PREFIX)),
    currentTask: [...slots.currentTask],
    plan: [...slots.plan],
    constraints: [...slots.constraints],
    decisions: [...slots.decisions],
    openTasks: openTasksOf(state),
    done: [...slots.done],
    files: { read: [...slots.filesRead], modified: [...slots.filesModified] },
    toolOperations: { tools: toolUsage(facts), commands: [...slots.commands], failed: [...slots.failed] },
    identifiers: slots.identifiers.filter((identifier) => !files.has(identifier)),
    summary,
    lastExchange: lastExchangeOf(facts),
  };
}

/** In progress, then next steps, then asks still pending from earlier summaries; each once. */
function openTasksOf(state: SummaryState): string[] {
  const tasks = new ItemList({ repeat: "first", caseless: true });
  for (const item of state.slots.inProgress) tasks.add(item);
  for (const item of state.slots.nextSteps) tasks.add(item);
  for (const goal of state.slots.goal) {
    if (goal.startsWith(PENDING_PREFIX)) tasks.add(RESPOND_PREFIX + goal.slice(PENDING_PREFIX.length));
  }
  return tasks.values();
}

/** Calls per tool name, most called first (then by name); failed = calls answered by an error result. */
function toolUsage(facts: readonly MessageFacts[]): ToolUsage[] {
  const failedIds = new Set<string>();
  for (const message of facts) {
    if (message.isError) for (const id of message.toolResultIds) failedIds.add(id);
  }
  const byName = new Map<string, ToolUsage>();
  for (const message of facts) {
    for (const call of message.toolCalls) {
      let usage = byName.get(call.name);
      if (usage === undefined) {
        usage = { name: call.name, calls: 0, failed: 0 };
        byName.set(call.name, usage);
      }
      usage.calls += 1;
      if (failedIds.has(call.id)) usage.failed += 1;
    }
  }
  return [...byName.values()].sort((a, b) => b.calls - a.calls || compareStrings(a.name, b.name));
}

/** The last user message with text and the last assistant text after it. */
function lastExchangeOf(facts: readonly MessageFacts[]): LastExchange {
  let userIndex = -1;
  for (let index = facts.length - 1; index >= 0; index--) {
    const message = facts[index] as MessageFacts;
    if (message.kind === "user" && message.text.trim() !== "") {
      userIndex = index;
      break;
    }
  }
  if (userIndex === -1) return { user: null, assistant: null, timestamp: null };
  const user = facts[userIndex] as MessageFacts;
  let reply: MessageFacts | undefined;
  for (let index = facts.length - 1; index > userIndex; index--) {
    const message = facts[index] as MessageFacts;
    if (message.kind === "assistant" && message.text.trim() !== "") {
      reply = message;
      break;
    }
  }
  const time = reply === undefined ? user.timestamp : reply.timestamp;
  return {
    user: user.text.trim(),
    assistant: reply === undefined ? null : reply.text.trim(),
    timestamp: time === undefined || !Number.isFinite(time) ? null : new Date(time).toISOString(),
  };
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function validate<T>(messages: readonly T[], adapter: MessageAdapter<T>, options: ExtractSessionStateOptions): number {
  const invalid = (what: string, found: string, path: string, hint: string): CompactionError =>
    new CompactionError(ErrorCodes.INPUT_INVALID, `extractSessionState expected ${what}, but found ${found}.`, { path, hint });
  if (!Array.isArray(messages)) {
    throw invalid("an array of messages", typeof messages, "/messages", "Pass the session's messages in order (e.g. buildContext(entries).messages).");
  }
  if (typeof adapter?.readFacts !== "function") {
    throw invalid("a MessageAdapter with readFacts(message)", String(adapter), "/adapter", "Pass createPiAdapter(), createAnthropicAdapter() or createOpenAIAdapter().");
  }
  if (typeof options?.counter?.count !== "function") {
    throw invalid("options.counter to be a TokenCounter", "none", "/counter", "Pass createEstimateCounter() or a tiktoken counter.");
  }
  const format: unknown = options.source?.format;
  if (!SOURCE_FORMATS.includes(format as SessionStateSource["format"])) {
    throw invalid(
      `options.source.format to be one of ${SOURCE_FORMATS.map((f) => JSON.stringify(f)).join(", ")}`,
      String(format),
      "/source/format",
      'Use "messages" for messages that do not come from a transcript file.',
    );
  }
  const max = options.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  if (typeof max !== "number" || !Number.isFinite(max) || max < 0) {
    throw invalid("options.summaryMaxTokens to be a number >= 0", String(max), "/summaryMaxTokens", `Leave it out to use ${DEFAULT_SUMMARY_MAX_TOKENS}.`);
  }
  const now = options.now;
  if (now !== undefined && (!(now instanceof Date) || Number.isNaN(now.getTime()))) {
    throw invalid("options.now to be a valid Date", String(now), "/now", "Leave it out to use the current time.");
  }
  return max;
}
