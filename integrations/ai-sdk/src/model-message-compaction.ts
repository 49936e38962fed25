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
 * (as message fingerprints), the messages it became and what a step sent for them, and recognises
 * any of them at the start of the next history: the rest is new, appended to the compacted
 * messages, and compacted again only when the prompt passes the threshold, by updating the summary
 * already there.
 *
 * Each conversation runs on core's `HostLoop` (one per conversation the memory serves, carried from
 * a step to the next with its compaction): the reply's reserve fixed for the window, the threshold,
 * the wait after a compaction that left the prompt over it (a failing summarizer is called at most
 * once per quarter of the window appended, not at every step), and what a step sends: the context
 * shaped to the budget by one prefix-stable shaper, with a `warning` event carrying the loop's
 * COMPACTION_CONTEXT_TRIMMED or COMPACTION_CONTEXT_OVERFLOW when the step cannot send it whole.
 *
 * With background compaction (`background`, on by default with a model summarizer) the loop's
 * preparation goes with it too (core's `backgroundCheck`): past the prepare mark a step starts the
 * compaction of its context and goes on sending the full context; the step that reaches the
 * threshold puts the prepared result in place, followed by every message appended since, without
 * waiting for a summary; a step waits only when its prompt could not be sent otherwise.
 */
import {
  backgroundCheck,
  backgroundFor,
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
  HostLoop,
  isCompactionError,
  markCacheBreakpoints,
  type Preparation,
  type PrepareInput,
  type Summarizer,
  untouchedResult,
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

/** A history, the messages it was compacted into, what was sent for them, and the conversation's loop. */
interface Compacted {
  readonly historyKeys: readonly string[];
  /** The context: the history as compacted (never shaped for sending: shaping leaves nothing out of it). */
  readonly messages: readonly ModelMessage[];
  readonly messageKeys: readonly string[];
  /** What the step sent for it (the context shaped to the budget): ai 7 carries these forward. */
  readonly sent: readonly ModelMessage[];
  readonly sentKeys: readonly string[];
  /** The conversation's host loop: its wait after a compaction and its shaper go on with it. */
  readonly loop: HostLoop<ModelMessage>;
}

/** Histories remembered at once: one per conversation a shared prepareStep serves, newest kept. */
const REMEMBERED = 16;
/** Usage figures remembered, newest kept. */
const USAGE_REMEMBERED = 4096;

export class ModelMessageCompaction {
  readonly #options: AiSdkCompactionOptions;
  readonly #usage = new Map<string, number>();
  #compactor: Promise<Compactor<ModelMessage>> | undefined;
  #remembered: Compacted[] = [];
  /** The prompt of the last step this memory prepared, and what no message shows (system, tools). */
  #lastPrompt: readonly ModelMessage[] | undefined;
  #unseenTokens = 0;
  /** Whether that prompt was its context shaped (older messages left out or shrunk): its usage figure then measures less than the context. */
  #lastShaped = false;
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
    const { working, historyKeys, known, loop: carried } = this.#extend(messages, keys);
    if (known !== undefined) return [...known.sent];

    // A conversation the memory has not seen gets its loop: the reply's reserve is fixed for the
    // window here (the options', else the config's, else the window's own), and one that does not
    // fit the window is an error, not a compaction failing at every step.
    const loop = carried ?? this.#newLoop(compactor);
    const tokens = this.#measure(compactor, working);
    const held = compactor.autoCompact.enabled ? await this.#autoCompact(compactor, loop, working, tokens, stepNumber) : working;
    const sent = this.#send(compactor, loop, held, stepNumber);
    const messageKeys = held.map(messageKey);
    this.#remember({ historyKeys, messages: held, messageKeys, sent, sentKeys: sent === held ? messageKeys : sent.map(messageKey), loop });
    this.#lastPrompt = sent;
    this.#lastShaped = sent !== held;
    // The step (or the route) sends it now: the provider's prompt cache is warm from here.
    loop.sent();
    return [...sent];
  }

  /** Whether it prepares compactions in the background: its `background` option, `auto` resolved for its compactor (on unless the summarizer is the extractive one). */
  async prepares(): Promise<boolean> {
    return backgroundFor(this.#options.background ?? "auto", await this.compactor());
  }

  /** Cancels the compactions being prepared (each a `dropped` event), then frees the token counter of a compactor built from the config. */
  async dispose(): Promise<void> {
    await Promise.all(this.#remembered.map(({ loop }) => this.#forget(loop, "the compaction memory was disposed")));
    if (this.#compactor === undefined || this.#options.compactor !== undefined) return;
    (await this.#compactor).dispose();
  }

  async #createCompactor(): Promise<Compactor<ModelMessage>> {
    if (this.#options.compactor !== undefined) return this.#options.compactor;
    const { cwd, agent, configPath, preset, isPinned, trusted } = this.#options;
    const adapter = createAiSdkAdapter({
      ...(isPinned !== undefined ? { isPinned } : {}),
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
    // A figure for a prompt that left messages out or shrank them measures what was sent, not the
    // context: it would hide the context's growth from the threshold (and from the loop's wait).
    if (assistant !== undefined && !this.#lastShaped) {
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
   * The history as the model should see it: a remembered compaction whose history (ai 6), whose
   * messages or whose request as sent (ai 7) start `messages`, followed by the rest; or `messages`
   * as they are. With a remembered compaction comes its conversation's loop.
   */
  #extend(
    messages: readonly ModelMessage[],
    keys: readonly string[],
  ): { working: readonly ModelMessage[]; historyKeys: readonly string[]; known?: Compacted; loop?: HostLoop<ModelMessage> } {
    let best: { entry: Compacted; length: number; asHistory: boolean } | undefined;
    for (const entry of this.#remembered) {
      for (const [prefix, asHistory] of [
        [entry.historyKeys, true],
        [entry.messageKeys, false],
        [entry.sentKeys, false],
      ] as const) {
        if (!startsWith(keys, prefix)) continue;
        if (keys.length === prefix.length) return { working: messages, historyKeys: keys, known: entry };
        if (best === undefined || prefix.length > best.length) best = { entry, length: prefix.length, asHistory };
      }
    }
    if (best === undefined) return { working: messages, historyKeys: keys };
    const rest = messages.slice(best.length);
    return {
      working: [...best.entry.messages, ...rest],
      historyKeys: best.asHistory ? keys : [...best.entry.historyKeys, ...keys.slice(best.length)],
      loop: best.entry.loop,
    };
  }

  #remember(entry: Compacted): void {
    // The entry this one extends is superseded by it.
    const kept = this.#remembered.filter(
      (old) => !(startsWith(entry.historyKeys, old.historyKeys) || startsWith(entry.messageKeys, old.messageKeys) || startsWith(entry.sentKeys, old.sentKeys)),
    );
    kept.push(entry);
    if (kept.length > REMEMBERED) kept.shift();
    // A conversation forgotten takes its preparation with it: nothing could put it in place any more.
    for (const old of this.#remembered) {
      if (!kept.some((known) => known.loop === old.loop)) this.#forget(old.loop, "its conversation was forgotten (the memory keeps the 16 it served last)");
    }
    this.#remembered = kept;
  }

  /** Cancels the loop's preparation, if any, reported as `dropped`; its promise, to wait for its end. */
  #forget(loop: HostLoop<ModelMessage>, why: string): Promise<void> {
    const preparation = loop.prepared;
    const cost = loop.drop(why);
    if (cost !== null) this.#emit({ type: "background", background: { type: "dropped", cost }, stepNumber: null });
    return preparation?.done ?? Promise.resolve();
  }

  /** A new conversation's loop, for the window of the options or the config (throws when the reserve does not fit it). */
  #newLoop(compactor: Compactor<ModelMessage>): HostLoop<ModelMessage> {
    const { background, waitMs, cacheTtlMs } = this.#options;
    return new HostLoop(compactor, {
      contextWindow: this.#options.contextWindow ?? compactor.contextWindow ?? 200_000,
      reserveTokens: this.#options.reserveTokens,
      maxOutputTokens: this.#options.maxOutputTokens,
      host: "@compaction/ai-sdk",
      ...(background === undefined ? {} : { background }),
      ...(waitMs === undefined ? {} : { waitMs }),
      ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
    });
  }

  /**
   * The context after the automatic compaction due now, if any: with background preparation,
   * core's `backgroundCheck` (start one past the prepare mark, put a prepared one in place at the
   * threshold, wait only when the prompt could not be sent otherwise); without, one compaction at
   * the threshold, which the step waits for.
   */
  async #autoCompact(compactor: Compactor<ModelMessage>, loop: HostLoop<ModelMessage>, working: readonly ModelMessage[], tokens: number, stepNumber: number | null): Promise<readonly ModelMessage[]> {
    if (!loop.background) return loop.due(tokens, working) ? this.#compactNow(compactor, loop, working, tokens, stepNumber) : working;
    const keys = working.map(messageKey);
    const put = await backgroundCheck<ModelMessage, readonly ModelMessage[]>(loop, {
      context: () => ({ tokens, messages: working, keys }),
      run: (snapshot, input) => this.#run(compactor, loop, snapshot, input),
      apply: async (preparation, appended) => this.#applyPrepared(compactor, loop, preparation, appended, tokens, stepNumber),
      compactNow: (summarizer) => this.#compactNow(compactor, loop, working, tokens, stepNumber, summarizer),
      report: (background) => this.#emit({ type: "background", background, stepNumber }),
    });
    return put ?? working;
  }

  /**
   * Puts a compaction prepared in the background in place: its messages, then `appended` (every
   * message since its snapshot), reported as any compaction is (`compaction-start` says when it was
   * prepared); the loop is told the size after, as after any automatic compaction.
   */
  #applyPrepared(
    compactor: Compactor<ModelMessage>,
    loop: HostLoop<ModelMessage>,
    preparation: Preparation<ModelMessage>,
    appended: readonly ModelMessage[],
    tokens: number,
    stepNumber: number | null,
  ): readonly ModelMessage[] {
    loop.applied(preparation);
    const result = preparation.result as CompactionResult<ModelMessage>;
    const messages = [...preparation.snapshot, ...appended];
    const prepared = { startedAt: preparation.startedAt, tokens: preparation.tokens, appended: appended.length };
    this.#emit({ type: "compaction-start", tokens, threshold: loop.threshold, contextWindow: loop.contextWindow, messages: messages.length, stepNumber, prepared });
    const output = result.status === "compacted" ? [...result.messages, ...appended] : messages;
    return this.#settled(compactor, loop, result, messages, output, tokens, stepNumber);
  }

  /** The prompt's size: the provider's figure plus what follows it, else our count plus what no message shows. */
  #measure(compactor: Compactor<ModelMessage>, messages: readonly ModelMessage[]): number {
    const size = compactor.tokens.contextTokens(messages);
    return size.lastUsageIndex === null ? size.tokens + this.#unseenTokens : size.tokens;
  }

  /**
   * Most tokens, by our count, the messages of a step may hold: the window less the reply's
   * reserve and what no message shows (system prompt, tools), as the provider counts them, at the
   * calibrated ratio of `messages`.
   */
  #budget(compactor: Compactor<ModelMessage>, loop: HostLoop<ModelMessage>, messages: readonly ModelMessage[]): number {
    const window = loop.contextWindow;
    return countedBudget(window - Math.min(window - 1, loop.reserveTokens + this.#unseenTokens), compactor.tokens.budgetRatio(messages));
  }

  /**
   * One automatic compaction of `messages` (the prompt is `tokens`), which the step waits for: the
   * compacted context, or `messages` when nothing was compacted. `summarizer`: the no-model one,
   * when a step could not wait longer for the one prepared in the background.
   */
  async #compactNow(
    compactor: Compactor<ModelMessage>,
    loop: HostLoop<ModelMessage>,
    messages: readonly ModelMessage[],
    tokens: number,
    stepNumber: number | null,
    summarizer?: Summarizer,
  ): Promise<readonly ModelMessage[]> {
    this.#emit({ type: "compaction-start", tokens, threshold: loop.threshold, contextWindow: loop.contextWindow, messages: messages.length, stepNumber });
    const result = await this.#run(compactor, loop, messages, { targetTokens: undefined }, summarizer);
    return this.#settled(compactor, loop, result, messages, result.status === "compacted" ? result.messages : messages, tokens, stepNumber);
  }

  /**
   * The compactor's run over `messages`; never throws (a compactor that throws is a `failed` result). What both a step's
   * compaction and one prepared in the background run.
   */
  async #run(
    compactor: Compactor<ModelMessage>,
    loop: HostLoop<ModelMessage>,
    messages: readonly ModelMessage[],
    input: Partial<PrepareInput>,
    summarizer?: Summarizer,
  ): Promise<CompactionResult<ModelMessage>> {
    const { contextWindow } = loop;
    // What no message shows takes room too: the kept messages and the summary get the rest. When a
    // usage figure is among the messages, the run's own ratio (Before, which holds that part, over
    // our count) already sizes its budget with it, so it is not taken off the window again.
    const unseen = compactor.tokens.contextBase(messages).lastUsageIndex === null ? this.#unseenTokens : 0;
    let result: CompactionResult<ModelMessage>;
    try {
      result = await compactor.compact({
        messages,
        contextWindow,
        reserveTokens: Math.min(contextWindow - 1, loop.reserveTokens + unseen),
        trigger: "auto",
        ...(this.#options.agent !== undefined ? { agent: this.#options.agent } : {}),
        ...(input.targetTokens === undefined ? {} : { targetTokens: input.targetTokens }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
        ...(summarizer === undefined ? {} : { summarizer }),
      });
    } catch (error) {
      const failure = isCompactionError(error) ? error : new CompactionError(ErrorCodes.INPUT_INVALID, `Compaction could not run: ${describeError(error)}`);
      return untouchedResult(messages, this.#measure(compactor, messages), "failed", `Compaction could not run: ${describeError(error)}`, failure);
    }
    return result;
  }

  /**
   * After an automatic compaction of `input` (the prompt was `tokens`) that left `output`: the
   * loop is told the size after (`settle`), so one that left the prompt over the threshold is not
   * run again before the prompt has grown by a quarter of the window; `compaction-end`, and a
   * warning when it failed. Returns `output`.
   */
  #settled(
    compactor: Compactor<ModelMessage>,
    loop: HostLoop<ModelMessage>,
    result: CompactionResult<ModelMessage>,
    input: readonly ModelMessage[],
    output: readonly ModelMessage[],
    tokens: number,
    stepNumber: number | null,
  ): readonly ModelMessage[] {
    const after = output === input ? tokens : this.#measure(compactor, output);
    const growth = loop.settle(after, output);
    this.#emit({ type: "compaction-end", result, tokens: after, stepNumber });
    if (result.status === "failed" || result.status === "cancelled") {
      this.#emit({ type: "warning", message: `Compaction ${result.status}: ${result.reason ?? "no reason given"}. ${afterFailure(growth)}`, code: result.error?.code ?? null, stepNumber });
    }
    return output;
  }

  /**
   * What a step sends for `context`: the loop's request, shaped to the budget (prefix-stable: a
   * message shrunk or left out once goes out so until the next compaction), with the preset's
   * send-time shaping. The loop's problem is a `warning` with its code: COMPACTION_CONTEXT_TRIMMED
   * when the request leaves out more older messages than the step before did, or
   * COMPACTION_CONTEXT_OVERFLOW when even the newest turn does not fit; the context then goes as it
   * is, for the provider to refuse rather than a request that lost its request.
   */
  #send(compactor: Compactor<ModelMessage>, loop: HostLoop<ModelMessage>, context: readonly ModelMessage[], stepNumber: number | null): readonly ModelMessage[] {
    const budget = this.#budget(compactor, loop, context);
    const why = compactor.autoCompact.enabled ? undefined : `the prompt is ${this.#measure(compactor, context)} tokens and auto-compaction is off`;
    const { request, problem } = loop.request(context, budget, {}, why);
    for (const warning of request.warnings) this.#emit({ type: "warning", message: warning, code: null, stepNumber });
    if (problem !== null) this.#emit({ type: "warning", message: `${problem.message} ${problem.hint ?? ""}`.trim(), code: problem.code, stepNumber });
    return request.fits ? request.messages : context;
  }

  #emit(event: AiSdkCompactionEvent): void {
    try {
      this.#options.on?.(event);
    } catch {
      // A listener's failure must not stop the agent's step.
    }
  }
}

/** What happens after an automatic compaction that did not run, failed or was cancelled (`growth`: the loop's wait, see `HostLoop.settle`). */
function afterFailure(growth: number | null): string {
  const sent = "The messages are sent as they are, shaped to the budget where they are over it";
  return growth === null ? `${sent}.` : `${sent}; the next automatic compaction waits until the prompt has grown by ${growth} tokens (a quarter of the window).`;
}
