import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import type { CompactionTrigger } from "../event.js";
import type { FactsCache, MessageFacts } from "../messages/adapter.js";
import type { CheckedCut } from "../cut/cut.js";
import type { MessageView } from "../cut/message-view.js";
import { makeSummaryRoom } from "./fit-budget.js";
import { MIN_KEPT_SHARE } from "./usable-window.js";
import type { ShrinkResult } from "../shrink/shrink-to-budget.js";
import { missingSummarizer, type Summarizer, summarizerMissing } from "../summarizer/summarizer.js";
import type { Calibration } from "../tokens/calibration.js";
import { budgetRatioOf, type MessageTokenCounter } from "../tokens/message-tokens.js";
import type { CompactInput, RunInit, SummarizeOptions } from "./run.js";

/**
 * The state of one compaction, written only by the core: plugins see it through a
 * `CompactionRun`, a view with their own name bound (see run.ts).
 */
export class RunState<T> {
  readonly input: CompactInput<T>;
  readonly contextWindow: number;
  /** See `CompactionRun.usableWindow`. */
  readonly usableWindow: number;
  /** See `CompactionRun.targetTokens`. */
  readonly targetTokens: number;
  /** `targetTokens` in our count (at the run's ratio), never above the budget: what shrinking makes room down to. */
  get targetCounted(): number {
    return Math.min(this.budget, this.countedTokens(this.targetTokens));
  }
  /** See `CompactionRun.minKeptTokens`. */
  get minKeptTokens(): number {
    // A size of messages kept: at the calibrated ratio, which leaves out the system prompt and tools.
    return Math.min(this.budget, Math.floor((this.contextWindow * MIN_KEPT_SHARE) / this.messageRatio));
  }
  /**
   * Most tokens the compacted context may hold, by our count: the context window minus the
   * reserve, at the calibrated ratio (`countedBudget` at `MessageTokenCounter.budgetRatio`) or at
   * `providerRatio` when that is higher, so that messages within it are within the window as the
   * provider counts them, and so is the After the run reports.
   */
  readonly budget: number;
  /** Context size before the run, using the provider's usage where the transcript has it. */
  readonly tokensBefore: number;
  /**
   * The provider's count of the input over ours, at least 1 (1 when the input carries no usage).
   * `tokensBefore` is the provider's usage figure plus counts of what followed it; it exceeds our
   * count by what no message shows (system prompt, tools) and, mostly, by another tokenizer
   * (Claude counts about 1.25x o200k on real sessions), so the difference scales with the text.
   * Computed once, with the budget it scales.
   */
  readonly providerRatio: number;
  /** The calibration `tokensBefore` was measured with. */
  readonly calibration: Calibration;
  /** `budgetRatioOf(calibration)`: the provider's tokens per token of ours for messages alone (`CompactionRun.messageRatio`). */
  readonly messageRatio: number;
  /** Tokens the summary message's own wrapping costs in this format (beyond the summary text). */
  readonly summaryOverheadTokens: number;
  readonly warnings: string[] = [];
  /** Scratch space for plugins, keyed by plugin name. */
  readonly state = new Map<string, unknown>();
  /** The checked cut, set after `selectCut`. */
  cut: CheckedCut | null = null;
  /**
   * What the core shrank to bring the cut under the budget (set with the cut), or null. With a
   * cut, its messages are the preserved then the kept messages, and `shrunk[].index` points into
   * the working set.
   */
  shrink: ShrinkResult<T> | null = null;
  /** Text of the latest summary among the compacted messages, to be updated rather than re-summarised. */
  previousSummary: string | undefined;
  /** Which layer ran (plugins set it; defaults to the cut's layer). */
  layer: string | null = null;
  /** The plugin whose tap is running now, blamed for an error it throws (set by the compactor). */
  running = "core";
  /** The hook whose tap is running now (null while the core itself runs), named in the error a tap throws. */
  runningHook: string | null = null;
  /** Plugin that last replaced the working set. */
  modifiedBy: string | null = null;
  /** True once the core assembles the result: the cut and its shrinking no longer change (rule 5 makes no room). */
  finishing = false;
  /** The recall tool shrink markers point at (the compactor's, fixed for the run). */
  readonly recallTool: string | undefined;

  readonly #facts: FactsCache<T>;
  readonly #tokens: MessageTokenCounter<T>;
  readonly #summarizer: Summarizer;
  readonly #summaryMaxTokens: number;
  /** The cut rule 5 last looked at (`summaryRoomLeft`), so it runs once per cut. */
  #roomCheckedFor: CheckedCut | null = null;
  #messages: readonly T[];
  #unseenTokens: number | undefined;
  #view: MessageView | null = null;
  #cancelled: { reason: string; plugin: string } | null = null;
  readonly #noCutReasons: string[] = [];

  constructor(init: RunInit<T>) {
    this.input = init.input;
    this.contextWindow = init.contextWindow;
    this.usableWindow = init.usableWindow;
    this.targetTokens = init.targetTokens;
    this.budget = init.budget;
    this.tokensBefore = init.tokensBefore;
    this.providerRatio = init.providerRatio;
    this.calibration = init.calibration;
    this.messageRatio = budgetRatioOf(init.calibration);
    this.summaryOverheadTokens = init.summaryOverheadTokens;
    this.#facts = init.facts;
    this.#tokens = init.tokens;
    this.#summarizer = init.summarizer;
    this.#summaryMaxTokens = init.summaryMaxTokens;
    this.recallTool = init.recallTool;
    this.#messages = init.input.messages;
  }

  get trigger(): CompactionTrigger {
    return this.input.trigger ?? "manual";
  }
  get focus(): string | undefined {
    return this.input.focus;
  }
  get signal(): AbortSignal | undefined {
    return this.input.signal;
  }
  /**
   * True when the host records a compaction only as a summary followed by an unchanged suffix of
   * the input (pi's compaction entry): plugins must not rely on rewriting messages in place
   * (`beforeCompact`'s `replaceMessages`) or on preserving messages from before the cut.
   */
  get suffixOnly(): boolean {
    return this.input.suffixOnly === true;
  }
  get summarizer(): Summarizer {
    return this.#summarizer;
  }
  /** The summary length `summarize()` uses when a plugin does not say. */
  get summaryMaxTokens(): number {
    return this.#summaryMaxTokens;
  }

  /** The working set: the input, or what a `beforeCompact` plugin replaced it with. */
  get messages(): readonly T[] {
    return this.#messages;
  }

  /**
   * Tokens the budget leaves for the summary's text, after rule 5 of fit-budget.ts made room for
   * it (see `CompactionRun.summaryRoomLeft`): the first call for a cut may shrink what it keeps,
   * replacing `cut` and `shrink` and adding a warning; a call once the result is being assembled
   * only reads.
   */
  summaryRoomLeft(): number {
    const cut = this.cut;
    if (cut !== null && cut !== this.#roomCheckedFor && !this.finishing) {
      const made = makeSummaryRoom({
        view: this.view,
        messages: this.#messages,
        tokens: this.#tokens,
        cut,
        budget: this.budget,
        summaryOverheadTokens: this.summaryOverheadTokens,
        summaryMaxTokens: this.#summaryMaxTokens,
        recallTool: this.recallTool,
      });
      if (made !== null) {
        this.cut = made.cut;
        this.shrink = made.shrink;
        this.warnings.push(`[core] ${made.repair}`);
      }
      this.#roomCheckedFor = this.cut;
    }
    return this.budget - (this.cut?.keptTokens ?? 0) - this.summaryOverheadTokens;
  }

  /**
   * Replaces the working set (e.g. with pruned tool outputs). Only before a cut is selected. With
   * `suffixOnly`, a run that ends with only this change is a noop, and a cut must keep messages
   * this change left as they were.
   */
  replaceMessages(plugin: string, messages: readonly T[]): void {
    if (this.cut) {
      throw new CompactionError(
        ErrorCodes.PLUGIN_FAILED,
        `Plugin '${plugin}' replaced the messages after the cut was selected; replace them in beforeCompact.`,
        { plugin },
      );
    }
    this.#messages = messages;
    this.#view = null;
    this.modifiedBy = plugin;
  }

  /** Facts and token counts of the working set, computed once per working set. */
  get view(): MessageView {
    if (!this.#view) {
      const facts = this.#messages.map((m) => this.#facts.of(m));
      const tokens = this.#messages.map((m) => this.#tokens.count(m));
      this.#view = { facts, tokens };
    }
    return this.#view;
  }

  /**
   * The part of `tokensBefore` no message accounts for: what the provider's usage figure holds
   * beyond our count of the input (system prompt, tool definitions, tokenizer differences). 0
   * when the input carries no usage. Add it to a count of messages to compare with the window.
   */
  get unseenTokens(): number {
    this.#unseenTokens ??= Math.max(0, this.tokensBefore - this.#tokens.total(this.input.messages));
    return this.#unseenTokens;
  }

  /**
   * Our count of some messages, as the provider would count them: the one measure for anything
   * compared with the context window or a share of it (thresholds, targets, room).
   */
  providerTokens(countedTokens: number): number {
    return Math.round(countedTokens * this.providerRatio);
  }

  /** The inverse of `providerTokens`: how many of our tokens fit in `providerTokens` of the provider's. */
  countedTokens(providerTokens: number): number {
    return Math.floor(providerTokens / this.providerRatio);
  }

  /**
   * The working set as the provider counts it: `tokensBefore` until a `beforeCompact` plugin
   * changes the working set (pruning makes the usage figure stale), then `providerTokens` of our
   * count of it.
   */
  get contextTokens(): number {
    if (this.#messages === this.input.messages) return this.tokensBefore;
    let counted = 0;
    for (const tokens of this.view.tokens) counted += tokens;
    return this.providerTokens(counted);
  }

  factsOf(message: T): MessageFacts {
    return this.#facts.of(message);
  }

  tokensOf(message: T): number {
    return this.#tokens.count(message);
  }

  /** Tokens of `text` in the run's counter (kept by text, as the summaries' lines are). */
  countText(text: string): number {
    return this.#tokens.counter.count(text);
  }

  /** Adds a warning to the result, prefixed with the plugin's name. */
  warn(plugin: string, message: string): void {
    this.warnings.push(`[${plugin}] ${message}`);
  }

  /** Stops the run; the input messages are returned untouched with this reason. */
  cancel(plugin: string, reason: string): void {
    this.#cancelled ??= { reason, plugin };
  }

  get cancelled(): { readonly reason: string; readonly plugin: string } | null {
    return this.#cancelled;
  }

  /**
   * Says why this plugin selected no cut (in `selectCut`); when no plugin selects one, the noop
   * result's reason quotes it after the plugin's name.
   */
  explainNoCut(plugin: string, reason: string): void {
    this.#noCutReasons.push(`${plugin}: ${reason.trim().replace(/\.$/, "")}`);
  }

  /** What plugins said about selecting no cut, oldest first, each as `plugin: reason`. */
  get noCutReasons(): readonly string[] {
    return this.#noCutReasons;
  }

  /** Compacted messages before the split turn (or before the cut), without the previous summary. */
  historyMessages(plugin: string): T[] {
    const cut = this.#requireCut(plugin);
    const end = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
    return this.#compacted(plugin, (i) => i < end, true);
  }

  /**
   * Compacted messages of a split turn's early part, without the previous summary (empty when the
   * turn is not split). When the split turn is the newest one, its request is kept ahead of the
   * summary and heads this list too, so the turn's summary says what the early part was doing it for.
   */
  turnPrefixMessages(plugin: string): T[] {
    const cut = this.#requireCut(plugin);
    if (!cut.isSplitTurn) return [];
    const prefix = this.#compacted(plugin, (i) => i >= cut.turnStartIndex, true);
    if (cut.preservedIndices.includes(cut.turnStartIndex)) prefix.unshift(this.#messages[cut.turnStartIndex] as T);
    return prefix;
  }

  /**
   * True when the previous summary lies inside the split turn's early part: the turn was split
   * before (its request kept ahead of that summary) and is split again. The summary's split-turn
   * part then describes this turn, and is updated rather than summarised again.
   */
  previousSummaryInTurn(plugin: string): boolean {
    const cut = this.#requireCut(plugin);
    return cut.isSplitTurn && this.#previousSummaryIndex(cut) > cut.turnStartIndex;
  }

  /** Every compacted message, oldest first. */
  compactedMessages(plugin: string): T[] {
    return this.#compacted(plugin, () => true, false);
  }

  /** Messages kept verbatim after the summary. */
  keptMessages(plugin: string): T[] {
    return this.#messages.slice(this.#requireCut(plugin).firstKeptIndex);
  }

  /** Messages kept before the summary (system prompt, pinned ones and their tool partners). */
  preservedMessages(plugin: string): T[] {
    return this.#requireCut(plugin).preservedIndices.map((i) => this.#messages[i] as T);
  }

  /** Asks the configured summarizer to summarise `messages` within `maxTokens`. */
  summarize(plugin: string, messages: readonly T[], options: SummarizeOptions = {}): Promise<string> {
    const kind = options.kind ?? "history";
    const previousSummary = options.previousSummary ?? (kind === "history" ? this.previousSummary : undefined);
    const summarizer = this.#summarizer;
    if (summarizer === missingSummarizer) return Promise.reject(summarizerMissing(plugin));
    return summarizer.summarize({
      messages: messages.map((m) => this.#facts.of(m)),
      maxTokens: options.maxTokens ?? this.#summaryMaxTokens,
      counter: this.#tokens.counter,
      kind,
      ...(previousSummary !== undefined ? { previousSummary } : {}),
      ...(this.focus !== undefined ? { focus: this.focus } : {}),
      ...(signalOf(this.signal, options.signal) ?? {}),
    }).catch((error: unknown) => {
      if (error instanceof CompactionError) throw error;
      throw new CompactionError(
        ErrorCodes.SUMMARIZER_FAILED,
        `Summarizer '${summarizer.name}' failed (asked by plugin '${plugin}'): ${describeError(error)}`,
        { plugin, cause: error, hint: "The history was left as it was; check the summarizer's configuration or try again." },
      );
    });
  }

  #requireCut(plugin: string): CheckedCut {
    if (!this.cut) {
      throw new CompactionError(
        ErrorCodes.PLUGIN_FAILED,
        `Plugin '${plugin}' asked for the cut's messages before a cut was selected; use them in summarize or afterCompact.`,
        { plugin },
      );
    }
    return this.cut;
  }

  #compacted(plugin: string, keep: (index: number) => boolean, withoutPreviousSummary: boolean): T[] {
    const cut = this.#requireCut(plugin);
    const skip = withoutPreviousSummary ? this.#previousSummaryIndex(cut) : -1;
    const out: T[] = [];
    for (const i of cut.compactedIndices) if (i !== skip && keep(i)) out.push(this.#messages[i] as T);
    return out;
  }

  #previousSummaryIndex(cut: CheckedCut): number {
    if (this.previousSummary === undefined) return -1;
    const facts = this.view.facts;
    for (let k = cut.compactedIndices.length - 1; k >= 0; k--) {
      const i = cut.compactedIndices[k] as number;
      if (facts[i]?.kind === "summary") return i;
    }
    return -1;
  }
}

/** `{ signal }` aborting when either signal does, or undefined when there is none. */
function signalOf(a: AbortSignal | undefined, b: AbortSignal | undefined): { signal: AbortSignal } | undefined {
  if (a && b) return { signal: AbortSignal.any([a, b]) };
  const one = a ?? b;
  return one ? { signal: one } : undefined;
}
