/**
 * Replays a session into a pi session file the way a host does: messages are appended as they
 * happen; before each model call (after a user message, or once every result of a tool step is
 * in) the context is checked against the preset's threshold; a compaction is written as pi's
 * `compaction` entry and the context is loaded again from the file by the boundary rule. The
 * file keeps every message, so recall can search what compaction took out of the context.
 *
 * At each of those model calls the request is then shaped as the context manager's `send()`
 * shapes it (`compactor.shapeRequest(context, { contextWindow, budget })`, budget = window less
 * the reserve): the preset's send-time taps, then the core's shrinking of what is still over the
 * budget. The context the host holds is left as it is (the session file keeps the full text);
 * both are counted: what is held, and what is sent.
 *
 * The truncation baseline drops the oldest messages instead: no summary, no note, nothing
 * written but the messages, and no shaping: it sends what it holds.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendCompaction, appendEntries, createSession, loadBoundary, type NewEntry } from "@compaction/transcript";
import {
  type CompactionResult,
  createCompactor,
  type MessageTokenCounter,
  type PiMessage,
  type Preset,
  type ShapedRequest,
} from "@compaction/core";

/** One compaction as the host saw it. */
export interface CompactionRecord {
  /** Index of the message after which it ran. */
  readonly atMessage: number;
  readonly tokensBefore: number;
  /** The context loaded again from the file, counted. */
  readonly tokensAfter: number;
  /** What the compactor reported (differs from `tokensAfter` when it changed kept messages, e.g. pruned them). */
  readonly resultTokensAfter: number;
  /** Tokens of the summary or eviction note written; 0 for truncation. */
  readonly summaryTokens: number;
  readonly layer: string | null;
}

/** How the requests sent differed from the context held (send-time shaping). */
export interface ShapingRecord {
  /** Model calls (checkpoints) in the replay. */
  readonly requests: number;
  /** Requests that were not the held context as it is (a tap changed it, or it was shrunk). */
  readonly shaped: number;
  /** Messages shrunk to head and tail, over all requests. */
  readonly shrunkMessages: number;
  /** Messages left out of what is sent, over all requests. */
  readonly droppedMessages: number;
  /** Requests still over the budget after shaping. */
  readonly overBudget: number;
  /** The budget the requests were shaped to (window less reserve). */
  readonly budget: number;
}

export interface ReplayOutcome {
  readonly name: string;
  readonly sessionPath: string;
  /** The context the host holds after the last message. */
  readonly context: PiMessage[];
  readonly contextTokens: number;
  /**
   * What the model would be sent for that context (its next request): the shaped context for a
   * preset, the context itself for truncation.
   */
  readonly request: readonly PiMessage[];
  readonly requestTokens: number;
  /** The largest context held: at each checkpoint, after the compaction there, if any. */
  readonly peakHeldTokens: number;
  /** The largest request sent: at each checkpoint, the held context shaped as a host sends it. */
  readonly peakSentTokens: number;
  /** null for truncation (it sends what it holds). */
  readonly shaping: ShapingRecord | null;
  readonly compactions: CompactionRecord[];
  /** Runs past the threshold that wrote nothing, by reason. */
  readonly notWritten: ReadonlyMap<string, number>;
  /** Distinct warnings of the compactions, with how often each came. */
  readonly warnings: ReadonlyMap<string, number>;
  /** The most a summary may take: the config's summary max tokens plus the last turn quoted in it; null for truncation. */
  readonly summaryLimit: number | null;
  readonly window: number;
  readonly ms: number;
}

export interface PresetReplayOptions {
  readonly preset: string;
  readonly window: number;
  readonly reserveTokens: number;
  /** `tiktoken` (the config default) or `estimate`. */
  readonly counter: "tiktoken" | "estimate";
  /** A folder inside the repo (so the preset packages resolve from it). */
  readonly projectsDir: string;
  /** Where the session file is written. */
  readonly sessionsDir: string;
  /** File name part, to tell the runs apart. */
  readonly label: string;
  /** Called at each model call whose request shaping changed, with the context held and the request sent. */
  readonly onShaped?: (held: readonly PiMessage[], sent: readonly PiMessage[]) => void;
}

/** True where a host would call the model next: not after an assistant message, not before a tool result. */
export function isCheckpoint(messages: readonly PiMessage[], index: number): boolean {
  const role = messages[index]?.role;
  return role !== undefined && role !== "assistant" && messages[index + 1]?.role !== "toolResult";
}

const asEntry = (message: PiMessage): NewEntry => ({ type: "message", message }) as NewEntry;

/** Replays `messages` under a preset resolved from a `.compactionrc.json`, as a user would configure it. */
export async function replayPreset(messages: readonly PiMessage[], options: PresetReplayOptions): Promise<ReplayOutcome> {
  const started = performance.now();
  const cwd = mkdtempSync(join(options.projectsDir, `${options.preset}-`));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "fidelity-bench-project", private: true }));
  writeFileSync(
    join(cwd, ".compactionrc.json"),
    JSON.stringify({ preset: options.preset, adapter: "pi", contextWindow: options.window, reserveTokens: options.reserveTokens, tokenizer: { counter: options.counter } }),
  );
  const compactor = await createCompactor<PiMessage>({ cwd });
  const sessionPath = join(options.sessionsDir, `${options.label}-${options.preset}.jsonl`);
  await createSession(sessionPath, { cwd: "/bench/project" });

  const threshold = compactor.autoCompactTokens(options.window);
  const compactions: CompactionRecord[] = [];
  const notWritten = new Map<string, number>();
  const warnings = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);
  let context: PiMessage[] = [];
  let peakHeldTokens = 0;
  let peakSentTokens = 0;
  // As the context manager's send(): the window less the compactor's reserve, no system prompt.
  const budget = options.window - compactor.reserveFor(options.window);
  const shape = (held: readonly PiMessage[]): ShapedRequest<PiMessage> => compactor.shapeRequest(held, { contextWindow: options.window, budget });
  const shaping = { requests: 0, shaped: 0, shrunkMessages: 0, droppedMessages: 0, overBudget: 0, budget };
  /** One model call: the context held now, and the request shaped from it. */
  const send = (held: number): void => {
    peakHeldTokens = Math.max(peakHeldTokens, held);
    const request = shape(context);
    peakSentTokens = Math.max(peakSentTokens, request.tokens);
    shaping.requests += 1;
    if (request.shapedBy.length > 0 || request.shrunk.length > 0 || request.dropped.length > 0) {
      shaping.shaped += 1;
      options.onShaped?.(context, request.messages);
    }
    shaping.shrunkMessages += request.shrunk.length;
    shaping.droppedMessages += request.dropped.length;
    if (!request.fits) shaping.overBudget += 1;
    for (const warning of request.warnings) bump(warnings, warning.replace(/\d[\d,]*/g, "N"));
  };
  let entryIds: string[] = [];
  let pending: PiMessage[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const written = await appendEntries(sessionPath, pending.map(asEntry));
    entryIds.push(...written.map((entry) => entry.id));
    pending = [];
  };

  try {
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i] as PiMessage;
      context.push(message);
      pending.push(message);
      if (!isCheckpoint(messages, i)) continue;
      const tokensBefore = compactor.tokens.contextTokens(context).tokens;
      if (tokensBefore <= threshold) {
        send(tokensBefore);
        continue;
      }

      // pi's compaction entry records a summary and an unchanged suffix, nothing else: ask for that.
      const result: CompactionResult<PiMessage> = await compactor.compact({ messages: context, trigger: "auto", suffixOnly: true });
      for (const warning of result.warnings) bump(warnings, warning.replace(/\d[\d,]*/g, "N"));
      const refusal = writeRefusal(result);
      if (refusal !== null) {
        bump(notWritten, refusal);
        send(tokensBefore);
        continue;
      }
      await flush();
      const cut = result.cut as NonNullable<CompactionResult<PiMessage>["cut"]>;
      const firstKeptEntryId = entryIds[cut.firstKeptIndex];
      if (firstKeptEntryId === undefined) throw new Error(`${options.preset}: the cut keeps from message ${cut.firstKeptIndex} of ${entryIds.length}.`);
      await appendCompaction(sessionPath, result, { firstKeptEntryId, tokensBefore: result.tokensBefore });
      const loaded = loadBoundary(sessionPath);
      context = loaded.messages;
      entryIds = loaded.entryIds;
      const tokensAfter = compactor.tokens.contextTokens(context).tokens;
      send(tokensAfter);
      compactions.push({
        atMessage: i,
        tokensBefore,
        tokensAfter,
        resultTokensAfter: result.tokensAfter,
        summaryTokens: compactor.tokens.counter.count(result.summary ?? ""),
        layer: result.event?.layer ?? null,
      });
    }
    await flush();
    const request = shape(context);
    return {
      name: options.preset,
      sessionPath,
      context,
      contextTokens: compactor.tokens.contextTokens(context).tokens,
      request: request.messages,
      requestTokens: request.tokens,
      peakHeldTokens,
      peakSentTokens,
      shaping,
      compactions,
      notWritten,
      warnings,
      summaryLimit: compactor.summaryMaxTokens + (await lastTurnAllowance(options.preset)),
      window: options.window,
      ms: performance.now() - started,
    };
  } finally {
    compactor.dispose();
  }
}

/**
 * Why a result cannot become pi's compaction entry (as `compaction compact` refuses it), or null
 * when it can. With `suffixOnly` a prune-only run comes back as a noop; the cut check stays for
 * results that keep messages from before their cut.
 */
function writeRefusal(result: CompactionResult<PiMessage>): string | null {
  if (result.status !== "compacted") return `${result.status}: ${(result.reason ?? "").replace(/\d[\d,]*/g, "N")}`;
  if (result.cut === null || result.summary === null) return "compacted without a cut or summary (nothing pi's compaction entry can record)";
  if (result.cut.preservedIndices.length > 0) return "keeps messages from before its cut (pi's compaction entry cannot record them)";
  return null;
}

/** Tokens of the last turn a preset quotes in its summary (its last-turn-injection's `lastTurnMaxTokens`), else 0. */
async function lastTurnAllowance(preset: string): Promise<number> {
  const module = (await import(`@compaction/preset-${preset}`)) as { default: Preset };
  for (const entry of module.default.plugins) {
    if (!Array.isArray(entry) || entry[0] !== "last-turn-injection") continue;
    const max = (entry[1] as { lastTurnMaxTokens?: unknown } | undefined)?.lastTurnMaxTokens;
    return typeof max === "number" ? max : 0;
  }
  return 0;
}

export interface TruncationOptions {
  readonly window: number;
  /** Share of the window past which it truncates. */
  readonly trigger: number;
  /** Share of the window it truncates down to. */
  readonly target: number;
  readonly tokens: MessageTokenCounter<PiMessage>;
  readonly sessionsDir: string;
  readonly label: string;
}

/**
 * The baseline: past `trigger` × window, drop the oldest messages until the context is at most
 * `target` × window (and never a tool result without its call). Every message is still written
 * to the session file, so the same recall index can be built over it.
 */
export async function replayTruncation(messages: readonly PiMessage[], options: TruncationOptions): Promise<ReplayOutcome> {
  const started = performance.now();
  const sessionPath = join(options.sessionsDir, `${options.label}-truncation.jsonl`);
  await createSession(sessionPath, { cwd: "/bench/project" }, messages.map(asEntry));
  const { tokens } = options;
  const compactions: CompactionRecord[] = [];
  let context: PiMessage[] = [];
  let peakTokens = 0;
  for (let i = 0; i < messages.length; i++) {
    context.push(messages[i] as PiMessage);
    if (!isCheckpoint(messages, i)) continue;
    const before = tokens.contextTokens(context).tokens;
    if (before <= options.trigger * options.window) {
      peakTokens = Math.max(peakTokens, before);
      continue;
    }
    let total = before;
    let drop = 0;
    while (drop < context.length - 1 && (total > options.target * options.window || context[drop]?.role === "toolResult")) {
      total -= tokens.count(context[drop] as PiMessage);
      drop += 1;
    }
    context = context.slice(drop);
    const after = tokens.contextTokens(context).tokens;
    peakTokens = Math.max(peakTokens, after);
    compactions.push({ atMessage: i, tokensBefore: before, tokensAfter: after, resultTokensAfter: after, summaryTokens: 0, layer: "truncate" });
  }
  const contextTokens = tokens.contextTokens(context).tokens;
  return {
    name: "truncation",
    sessionPath,
    context,
    contextTokens,
    request: context,
    requestTokens: contextTokens,
    peakHeldTokens: peakTokens,
    peakSentTokens: peakTokens,
    shaping: null,
    compactions,
    notWritten: new Map(),
    warnings: new Map(),
    summaryLimit: null,
    window: options.window,
    ms: performance.now() - started,
  };
}
