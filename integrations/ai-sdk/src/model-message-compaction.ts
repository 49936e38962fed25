/**
 * One compaction memory for AI SDK messages: what `compactionPrepareStep` and
 * `compactModelMessages` run on.
 *
 * The AI SDK hands `prepareStep` the history in two ways. ai 6 rebuilds it at every step from the
 * initial messages and every response so far (1, 3, 5, ... messages), so whatever prepareStep
 * returned is forgotten; ai 7 carries the returned messages forward and appends the new ones. Both
 * must keep the earlier compaction and extend it: summarising the whole history from scratch at
 * every step would cost a summary per step and change the prompt's start each time, so no prompt
 * cache would ever hit. The memory therefore records, per compaction, the history it stood for
 * (as message fingerprints) and the messages it became, and recognises either at the start of the
 * next history: the rest is new, appended to the compacted messages, and compacted again only when
 * the prompt passes the threshold, by updating the summary already there.
 */
import {
  autoCompactTokens,
  hostReserveTokens,
  cacheBreakpoints,
  CompactionError,
  type CompactionResult,
  type Compactor,
  countedBudget,
  createCompactor,
  describeError,
  describeValue,
  ErrorCodes,
  configWarnings,
  isCompactionError,
  markCacheBreakpoints,
} from "@compaction/core";
import type { ModelMessage } from "ai";
import { createAiSdkAdapter } from "./ai-sdk-adapter.js";
import { messageKey, startsWith } from "./message-key.js";
import { type AiSdkCompactionEvent, type AiSdkCompactionOptions, checkOptions } from "./options.js";

/** What the memory reads from a step result (`StepResult` of ai 6 and 7). */
export interface StepUsage {
  readonly usage?: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined } | undefined;
  readonly response?: { readonly messages?: readonly unknown[] | undefined } | undefined;
}

/** Where a compaction is asked for: a step of a tool loop, or a one-off call. */
export interface CompactContext {
  /** The steps so far (prepareStep's `steps`): their usage calibrates the count. */
  readonly steps?: readonly StepUsage[];
  readonly stepNumber?: number;
}

/** A history and the messages it was compacted into. */
interface Compacted {
  readonly historyKeys: readonly string[];
  readonly messages: readonly ModelMessage[];
  readonly messageKeys: readonly string[];
}

/** Histories remembered at once: one per conversation a shared prepareStep serves, newest kept. */
const REMEMBERED = 16;
/** Usage figures remembered, newest kept. */
const USAGE_REMEMBERED = 4096;
/** The request is pinned while it takes at most this share of the budget (a longer one may be shrunk). */
const PINNED_REQUEST_SHARE = 0.25;

export class ModelMessageCompaction {
  readonly #options: AiSdkCompactionOptions;
  readonly #usage = new Map<string, number>();
  /** The pinned stand-ins of the request being worked on, one per compaction (see #pinRequest). */
  readonly #pinnedRequests = new WeakSet<object>();
  #compactor: Promise<Compactor<ModelMessage>> | undefined;
  #remembered: Compacted[] = [];
  /** The prompt of the last step this memory prepared, and what no message shows (system, tools). */
  #lastPrompt: readonly ModelMessage[] | undefined;
  #unseenTokens = 0;
  /** With markCache: each marked message sent, to the message it was marked from. */
  readonly #marked = new WeakMap<object, ModelMessage>();
  /** With markCache: the last step's messages before marking. */
  #lastSent: readonly ModelMessage[] = [];

  constructor(options: AiSdkCompactionOptions = {}) {
    checkOptions(options);
    this.#options = options;
  }

  /** The compactor, built from the config on first use. */
  compactor(): Promise<Compactor<ModelMessage>> {
    this.#compactor ??= this.#createCompactor();
    return this.#compactor;
  }

  /**
   * The messages to send for `messages`: the earlier compaction extended with what is new, and
   * compacted again when over the threshold. The same history gives the same messages. With
   * `markCache`, the cache breakpoints are marked on them (see the option).
   */
  async compact(messages: readonly ModelMessage[], context: CompactContext = {}): Promise<ModelMessage[]> {
    if (this.#options.markCache !== true) return this.#prepare(messages, context);
    // ai 7 carries what a step was sent forward: the markers this memory added come off first.
    const unmarked = Array.isArray(messages) ? messages.map((message) => this.#marked.get(message) ?? message) : messages;
    const prepared = await this.#prepare(unmarked, context);
    const compactor = await this.compactor();
    const previous = this.#lastSent;
    let unchanged = 0;
    while (unchanged < previous.length && unchanged < prepared.length && messageKey(previous[unchanged] as ModelMessage) === messageKey(prepared[unchanged] as ModelMessage)) unchanged += 1;
    this.#lastSent = prepared;
    const points = cacheBreakpoints(prepared.map((message) => compactor.facts.of(message)), unchanged);
    const marked = markCacheBreakpoints(compactor.adapter, prepared, points);
    marked.forEach((message, i) => {
      if (message !== prepared[i]) this.#marked.set(message, prepared[i] as ModelMessage);
    });
    return [...marked];
  }

  async #prepare(messages: readonly ModelMessage[], context: CompactContext): Promise<ModelMessage[]> {
    if (!Array.isArray(messages)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/ai-sdk: expected an array of ModelMessage, found ${describeValue(messages)}.`, {
        path: "/messages",
        hint: "Pass prepareStep's messages, or convertToModelMessages(uiMessages).",
      });
    }
    const compactor = await this.compactor();
    const stepNumber = context.stepNumber ?? null;
    this.#readSteps(compactor, context.steps ?? []);

    const keys = messages.map(messageKey);
    const { working, historyKeys, known } = this.#extend(messages, keys);
    if (known !== undefined) return [...known.messages];

    const contextWindow = this.#options.contextWindow ?? compactor.contextWindow ?? 200_000;
    // The reply's reserve for this window (the options', else the config's, else the window's own):
    // one that does not fit the window is an error, not a compaction failing at every step.
    const reserve = hostReserveTokens(compactor, contextWindow, this.#options, "@compaction/ai-sdk");
    // The threshold's share of the usable window (the window, or less when the reserve takes over a
    // tenth of it): compacted before the messages outgrow what a step can send, so between
    // compactions each step's prompt only grows at its end and the provider's prompt cache holds.
    const threshold = compactor.autoCompact.enabled ? autoCompactTokens(contextWindow, reserve, compactor.autoCompact.threshold) : Infinity;
    let output = working;
    const tokens = this.#measure(compactor, working);
    if (tokens > threshold) {
      output = await this.#compactNow(compactor, working, { tokens, threshold, contextWindow, reserve, stepNumber });
    }
    this.#remember({ historyKeys, messages: output, messageKeys: output.map(messageKey) });
    this.#lastPrompt = output;
    return [...output];
  }

  /** Frees the token counter of a compactor built from the config. */
  async dispose(): Promise<void> {
    if (this.#compactor === undefined || this.#options.compactor !== undefined) return;
    (await this.#compactor).dispose();
  }

  async #createCompactor(): Promise<Compactor<ModelMessage>> {
    if (this.#options.compactor !== undefined) return this.#options.compactor;
    const { cwd, agent, configPath, preset, isPinned, trusted } = this.#options;
    const adapter = createAiSdkAdapter({
      isPinned: (message) => this.#pinnedRequests.has(message) || isPinned?.(message) === true,
      usageOf: (message) => this.#usage.get(messageKey(message)),
    });
    const compactor = await createCompactor<ModelMessage>({
      adapter,
      ...(cwd !== undefined ? { cwd } : {}),
      ...(agent !== undefined ? { agent } : {}),
      ...(configPath !== undefined ? { configPath } : {}),
      ...(preset !== undefined ? { preset } : {}),
      ...(trusted !== undefined ? { trusted } : {}),
    });
    for (const warning of configWarnings(compactor)) {
      this.#emit({ type: "warning", message: `${warning.message} ${warning.hint}`, code: warning.code, stepNumber: null });
    }
    try {
      for (const plugin of this.#options.plugins ?? []) compactor.use(plugin);
    } catch (error) {
      compactor.dispose();
      throw error;
    }
    return compactor;
  }

  /**
   * The newest step's usage: the provider's figure for the whole context as of its assistant
   * message, and (against our count of the prompt we prepared for it) the tokens no message shows:
   * system prompt, tool definitions, the provider's own framing.
   */
  #readSteps(compactor: Compactor<ModelMessage>, steps: readonly StepUsage[]): void {
    const step = steps.at(-1);
    const input = step?.usage?.inputTokens;
    if (step === undefined || typeof input !== "number" || !Number.isFinite(input)) return;
    const responses = step.response?.messages ?? [];
    const assistant = [...responses].reverse().find((message) => (message as { role?: unknown })?.role === "assistant");
    if (assistant !== undefined) {
      const key = messageKey(assistant as ModelMessage);
      this.#usage.delete(key);
      this.#usage.set(key, input + (step.usage?.outputTokens ?? 0));
      if (this.#usage.size > USAGE_REMEMBERED) this.#usage.delete(this.#usage.keys().next().value as string);
    }
    // What the prompt held beyond its messages as the provider counts them (system prompt, tools),
    // for a prompt whose messages carry no usage figure (one that does measures from it).
    if (this.#lastPrompt !== undefined) {
      const counted = compactor.tokens.total(this.#lastPrompt) * compactor.tokens.budgetRatio(this.#lastPrompt);
      this.#unseenTokens = Math.max(0, Math.round(input - counted));
    }
  }

  /**
   * The history as the model should see it: a remembered compaction whose history (ai 6) or whose
   * messages (ai 7) start `messages`, followed by the rest; or `messages` as they are.
   */
  #extend(messages: readonly ModelMessage[], keys: readonly string[]): { working: readonly ModelMessage[]; historyKeys: readonly string[]; known?: Compacted } {
    let best: { entry: Compacted; length: number; asHistory: boolean } | undefined;
    for (const entry of this.#remembered) {
      if (keys.length === entry.historyKeys.length && startsWith(keys, entry.historyKeys)) return { working: messages, historyKeys: keys, known: entry };
      if (keys.length === entry.messageKeys.length && startsWith(keys, entry.messageKeys)) return { working: messages, historyKeys: keys, known: entry };
      if (startsWith(keys, entry.historyKeys) && (best === undefined || entry.historyKeys.length > best.length)) {
        best = { entry, length: entry.historyKeys.length, asHistory: true };
      }
      if (startsWith(keys, entry.messageKeys) && (best === undefined || entry.messageKeys.length > best.length)) {
        best = { entry, length: entry.messageKeys.length, asHistory: false };
      }
    }
    if (best === undefined) return { working: messages, historyKeys: keys };
    const rest = messages.slice(best.length);
    return {
      working: [...best.entry.messages, ...rest],
      historyKeys: best.asHistory ? keys : [...best.entry.historyKeys, ...keys.slice(best.length)],
    };
  }

  #remember(entry: Compacted): void {
    // The entry this one extends is superseded by it.
    this.#remembered = this.#remembered.filter(
      (old) => !(startsWith(entry.historyKeys, old.historyKeys) || startsWith(entry.messageKeys, old.messageKeys)),
    );
    this.#remembered.push(entry);
    if (this.#remembered.length > REMEMBERED) this.#remembered.shift();
  }

  /** The prompt's size: the provider's figure plus what follows it, else our count plus what no message shows. */
  #measure(compactor: Compactor<ModelMessage>, messages: readonly ModelMessage[]): number {
    const size = compactor.tokens.contextTokens(messages);
    return size.lastUsageIndex === null ? size.tokens + this.#unseenTokens : size.tokens;
  }

  async #compactNow(
    compactor: Compactor<ModelMessage>,
    messages: readonly ModelMessage[],
    run: { tokens: number; threshold: number; contextWindow: number; reserve: number; stepNumber: number | null },
  ): Promise<readonly ModelMessage[]> {
    const { tokens, threshold, contextWindow, reserve, stepNumber } = run;
    this.#emit({ type: "compaction-start", tokens, threshold: Math.round(threshold), contextWindow, messages: messages.length, stepNumber });
    // Our count of messages that fits the window less the reserve and what no message shows, as
    // the provider counts them (the calibrated ratio): the request's pinning and the shaping below.
    const budget = countedBudget(contextWindow - Math.min(contextWindow - 1, reserve + this.#unseenTokens), compactor.tokens.budgetRatio(messages));
    const pinned = this.#pinRequest(compactor, messages, budget);
    // What no message shows takes room too: the kept messages and the summary get the rest. When a
    // usage figure is among the messages, the run's own ratio (Before, which holds that part, over
    // our count) already sizes its budget with it, so it is not taken off the window again.
    const unseen = compactor.tokens.contextBase(messages).lastUsageIndex === null ? this.#unseenTokens : 0;
    let result: CompactionResult<ModelMessage>;
    try {
      result = await compactor.compact({
        messages: pinned.messages,
        contextWindow,
        reserveTokens: Math.min(contextWindow - 1, reserve + unseen),
        trigger: "auto",
        ...(this.#options.agent !== undefined ? { agent: this.#options.agent } : {}),
      });
    } catch (error) {
      const code = isCompactionError(error) ? error.code : null;
      this.#emit({ type: "warning", message: `Compaction could not run: ${describeError(error)}. The messages were sent as they were.`, code, stepNumber });
      return messages;
    }
    let output: readonly ModelMessage[] =
      result.status === "compacted" ? result.messages.map((message): ModelMessage => (pinned.standIn !== undefined && message === pinned.standIn ? (pinned.request as ModelMessage) : message)) : messages;
    // Over the window still (the newest turn alone is too large, or the run failed): the provider
    // would reject it, so what is sent is shaped to the budget as every host's request is
    // (compactor.shapeRequest: shrunk to head and tail, then older turns and steps left out), so
    // the loop goes on; the app's own messages keep the full text. When even that cannot fit (the
    // system prompt and the request alone are over), the messages go as they were, with a warning.
    let after = this.#measure(compactor, output);
    if (after > contextWindow) {
      const shaped = compactor.shapeRequest(output, { contextWindow, reserveTokens: reserve, budget });
      if (shaped.fits) {
        for (const warning of shaped.warnings) this.#emit({ type: "warning", message: warning, code: null, stepNumber });
        output = shaped.messages;
        after = this.#measure(compactor, output);
      }
    }
    this.#emit({ type: "compaction-end", result, tokens: after, stepNumber });
    if (result.status === "failed" || result.status === "cancelled") {
      this.#emit({
        type: "warning",
        message: `Compaction ${result.status}: ${result.reason ?? "no reason given"}. The messages were sent as they were.`,
        code: result.error?.code ?? null,
        stepNumber,
      });
    }
    if (after > contextWindow) {
      this.#emit({
        type: "warning",
        message: `The prompt is ${after} tokens after compacting, over the context window of ${contextWindow}: the newest messages alone do not fit. Raise contextWindow, or shorten large tool results.`,
        code: ErrorCodes.CONTEXT_OVERFLOW,
        stepNumber,
      });
    }
    return output;
  }

  /**
   * The working set with the request being worked on (the newest user message) pinned, so a long
   * tool loop's early steps are summarised while the request stays verbatim in every prompt (the
   * core would otherwise keep the whole turn and only shrink it). Pinning goes on a stand-in copy
   * made for this compaction alone: facts are cached per message object, and the same message is
   * no longer the request once the user sends another. A request over a quarter of the budget is
   * left unpinned, so the core may shrink it to fit.
   */
  #pinRequest(
    compactor: Compactor<ModelMessage>,
    messages: readonly ModelMessage[],
    budget: number,
  ): { messages: readonly ModelMessage[]; request?: ModelMessage; standIn?: ModelMessage } {
    for (let index = messages.length - 1; index >= 0; index--) {
      const request = messages[index] as ModelMessage;
      if (compactor.facts.of(request).kind !== "user") continue;
      if (compactor.tokens.count(request) > budget * PINNED_REQUEST_SHARE) return { messages };
      const standIn = { ...request } as ModelMessage;
      this.#pinnedRequests.add(standIn);
      return { messages: messages.map((message, i) => (i === index ? standIn : message)), request, standIn };
    }
    return { messages };
  }

  #emit(event: AiSdkCompactionEvent): void {
    try {
      this.#options.on?.(event);
    } catch {
      // A listener's failure must not stop the agent's step.
    }
  }
}
