import type { CompactionTrigger } from "../event.js";
import type { FactsCache, MessageFacts } from "../messages/adapter.js";
import type { CheckedCut } from "../cut/cut.js";
import type { MessageView } from "../cut/message-view.js";
import { keptRoom } from "../cut/structure.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import type { Calibration } from "../tokens/calibration.js";
import type { ContextAnchor, MessageTokenCounter } from "../tokens/message-tokens.js";
import type { RunState } from "./run-state.js";

export interface CompactInput<T> {
  /** The conversation, oldest first. Never mutated. */
  readonly messages: readonly T[];
  /** The model's context window in tokens. Defaults to the compactor's (or its config's). */
  readonly contextWindow?: number;
  /** Tokens kept free for the model's reply. Defaults to the compactor's, else 0. */
  readonly reserveTokens?: number;
  /** `auto` when a threshold triggered the run, `manual` when a user asked. Default `manual`. */
  readonly trigger?: CompactionTrigger;
  /** The user's focus instruction for the summary (`/compact <focus>`). */
  readonly focus?: string;
  /** The agent this run is for (plugins may read it). */
  readonly agent?: string;
  /** Cancels the run; the input is returned untouched. */
  readonly signal?: AbortSignal;
  /**
   * The host records a compaction only as a summary followed by an unchanged suffix of the input
   * (pi's `compaction` entry: a summary and the first entry kept). Plugins must not rely on
   * rewriting messages in place (`beforeCompact`'s `replaceMessages`) or on preserving messages
   * from before the cut. The core turns a run that only changed messages in place into a `noop`,
   * and refuses a cut whose kept messages were changed. Default false.
   */
  readonly suffixOnly?: boolean;
  /**
   * The size of the first messages as the provider counts them, known to the host: its record of
   * the last compaction's After (the event's `tokensAfterCompaction`). `tokensBefore` then starts
   * from it, as from a usage figure, unless a message after the ones it covers has a newer one
   * (see `MessageTokenCounter.contextTokens`), so it matches the size the host shows.
   */
  readonly anchor?: ContextAnchor;
  /**
   * The most this compaction should leave, as the provider counts it, when the host will add to
   * the result before it is used: a compaction prepared in the background (`HostLoop`) is applied
   * with every message appended while it ran, so it keeps less of the snapshot by about as much.
   * At most the run's own target (`compactedTargetTokens`); default that target.
   */
  readonly targetTokens?: number;
  /**
   * The summarizer this run asks instead of the compactor's: the host loop's no-model summary when
   * a request cannot wait any longer for the model's. Default the compactor's.
   */
  readonly summarizer?: Summarizer;
}

/** The value passed along the `summarize` waterfall. */
export interface SummaryDraft {
  /** The text so far; each plugin returns the draft it wants the next one to see. */
  readonly text: string;
  /**
   * `summary`: becomes a summary message of the host's format. `note`: becomes a system note
   * (rolling's eviction note). `none`: the compacted messages are dropped with no trace, on
   * purpose (a plugin must choose this explicitly).
   */
  readonly kind: "summary" | "note" | "none";
}

/** True for the draft no plugin has written yet: a plugin that writes base summaries may take it. */
export function isEmptyDraft(draft: SummaryDraft): boolean {
  return draft.kind === "summary" && draft.text.trim() === "";
}

export interface RunInit<T> {
  readonly input: CompactInput<T>;
  readonly facts: FactsCache<T>;
  readonly tokens: MessageTokenCounter<T>;
  readonly summarizer: Summarizer;
  readonly summaryMaxTokens: number;
  readonly contextWindow: number;
  /** The window the shares in thresholds and targets apply to (`usableWindow`). */
  readonly usableWindow: number;
  /** The most this compaction should leave, as the provider counts it (`compactedTargetTokens`). */
  readonly targetTokens: number;
  readonly budget: number;
  readonly tokensBefore: number;
  /** `tokensBefore` over our count of the input, at least 1 (`CompactionRun.providerRatio`). */
  readonly providerRatio: number;
  /** The calibration `tokensBefore` was measured with (the event records it when it was learned). */
  readonly calibration: Calibration;
  readonly summaryOverheadTokens: number;
  /** The recall tool shrink markers point at, when one is configured. */
  readonly recallTool: string | undefined;
}

export interface SummarizeOptions {
  /** Longest summary allowed, in tokens of the run's counter. Default: the compactor's `summaryMaxTokens`. */
  readonly maxTokens?: number;
  readonly kind?: "history" | "turnPrefix";
  /** Defaults to the run's previous summary for `history`, none for `turnPrefix`. */
  readonly previousSummary?: string;
  /** Cancels this request (e.g. a plugin's own timeout); the run's signal always applies too. */
  readonly signal?: AbortSignal;
}

/**
 * One compaction as a plugin sees it: the working set and the run's settings, read-only, and
 * what a plugin may do, each action recorded under the plugin's own name (the compactor hands
 * every tap a view with its plugin's name bound, as Rollup gives each plugin its own context).
 * What only the core writes (the checked cut, warnings, who changed what) is not writable here.
 */
export class CompactionRun<T> {
  /** The plugin this view belongs to: its warnings, cancellation and changes carry this name. */
  readonly plugin: string;
  readonly #run: RunState<T>;

  /** Made by the compactor; plugins receive it in their taps. */
  constructor(run: RunState<T>, plugin: string) {
    this.#run = run;
    this.plugin = plugin;
  }

  // --- The run's settings -------------------------------------------------------------------

  /** What `compact()` was called with (its messages are the working set before any change). */
  get input(): CompactInput<T> {
    return this.#run.input;
  }
  get contextWindow(): number {
    return this.#run.contextWindow;
  }
  /**
   * The window a plugin's shares are of (`usableWindow` in the core): the context window, or,
   * when the reserve for the reply takes over a tenth of it, (window - reserve) / 0.9, so that a
   * threshold or target of at most 90% is reached before the context outgrows what can be sent.
   */
  get usableWindow(): number {
    return this.#run.usableWindow;
  }
  /**
   * The most this compaction should leave, as the provider counts it: 0.6 of the size at which
   * the host compacts on its own (`compactor.autoCompactTokens`; `COMPACTED_SHARE`), so the next
   * compaction, and the prompt-cache miss it costs, is many turns away; 0.75 when the context is
   * larger than the window (`overWindow`, `OVERFLOW_COMPACTED_SHARE`). A soft target: a strategy
   * that can choose how much it keeps stays within it (and says so when a setting of the user's
   * was lowered); `budget` remains the hard limit.
   */
  get targetTokens(): number {
    return this.#run.targetTokens;
  }
  /**
   * True when the context being compacted (`tokensBefore`) is larger than the whole context
   * window: a switch to a smaller model, a session opened at a smaller window, an overflow. Not
   * one of a host's regular compactions: the newest turns hold most of what the agent uses next,
   * so strategies keep the newest messages up to `targetTokens`, not only their usual share
   * (safeguard's `keepRecentTokens`), as plain truncation to the window would.
   */
  get overWindow(): boolean {
    return this.#run.tokensBefore > this.#run.contextWindow;
  }
  /**
   * The fewest tokens of the newest messages (our count) this compaction keeps verbatim where
   * cut points and the budget allow: an eighth of the context window (`MIN_KEPT_SHARE`), as a
   * size of messages (`countedMessageTokens`). Whatever
   * else bounds what is kept (a strategy's allowance beside its summary, the run's target, a
   * cut moved to a turn boundary or moved later by the core), the kept part does not go below
   * it: the newest turns hold most of what the agent uses next, and plain truncation would keep
   * them. A strategy's own setting below it (a `keepRecentTokens` of the user's) stands.
   */
  get minKeptTokens(): number {
    return this.#run.minKeptTokens;
  }
  /**
   * For a run `overWindow`, the most of the newest messages it keeps verbatim, in our count: what
   * the target (or the budget, when lower) leaves beside a summary of `summaryTokens` and the
   * messages the core always keeps. 0 for a regular compaction. A strategy keeps the larger of
   * this and its own setting.
   */
  overWindowKeepTokens(summaryTokens: number): number {
    if (!this.overWindow) return 0;
    const limit = Math.min(this.budget, this.countedTokens(this.targetTokens));
    return keptRoom(this.view, { budget: limit, summaryTokens });
  }
  /**
   * Most tokens the compacted context may hold, by our count: the context window minus the
   * reserve, at the calibrated ratio (`countedBudget` at `MessageTokenCounter.budgetRatio`) or at
   * `providerRatio` when that is higher, so that messages within it are within the window as the
   * provider counts them, and so is the After the run reports.
   */
  get budget(): number {
    return this.#run.budget;
  }
  /** Context size before the run, using the provider's usage where the transcript has it. */
  get tokensBefore(): number {
    return this.#run.tokensBefore;
  }
  /** Tokens the summary message's own wrapping costs in this format (beyond the summary text). */
  get summaryOverheadTokens(): number {
    return this.#run.summaryOverheadTokens;
  }
  get trigger(): CompactionTrigger {
    return this.#run.trigger;
  }
  get focus(): string | undefined {
    return this.#run.focus;
  }
  get signal(): AbortSignal | undefined {
    return this.#run.signal;
  }
  /**
   * True when the host records a compaction only as a summary followed by an unchanged suffix of
   * the input (pi's compaction entry): plugins must not rely on rewriting messages in place
   * (`beforeCompact`'s `replaceMessages`) or on preserving messages from before the cut.
   */
  get suffixOnly(): boolean {
    return this.#run.suffixOnly;
  }
  get summarizer(): Summarizer {
    return this.#run.summarizer;
  }
  /** The summary length `summarize()` uses when a plugin does not say. */
  get summaryMaxTokens(): number {
    return this.#run.summaryMaxTokens;
  }

  // --- The working set and the cut ------------------------------------------------------------

  /** The working set: the input, or what a `beforeCompact` plugin replaced it with. */
  get messages(): readonly T[] {
    return this.#run.messages;
  }
  /** Facts and token counts of the working set, computed once per working set. */
  get view(): MessageView {
    return this.#run.view;
  }
  /** The checked cut, from `summarize` on; null before it is selected. */
  get cut(): CheckedCut | null {
    return this.#run.cut;
  }
  /** Text of the latest summary among the compacted messages, to be updated rather than re-summarised. */
  get previousSummary(): string | undefined {
    return this.#run.previousSummary;
  }
  /** The layer that ran, as a plugin set it (`setLayer`); the event falls back to the cut's layer. */
  get layer(): string | null {
    return this.#run.layer;
  }
  /** Scratch space shared by the run's plugins, keyed by plugin name. */
  get state(): Map<string, unknown> {
    return this.#run.state;
  }
  factsOf(message: T): MessageFacts {
    return this.#run.factsOf(message);
  }
  tokensOf(message: T): number {
    return this.#run.tokensOf(message);
  }
  /** Tokens of `text` in the run's counter (our count): e.g. a separator a plugin adds to a summary. */
  countText(text: string): number {
    return this.#run.countText(text);
  }
  /**
   * Tokens the budget leaves for the summary's text: the budget less what the cut keeps and the
   * summary message's wrapping; 0 or less when the kept messages leave nothing. When that is less
   * than `MIN_SUMMARY_ROOM` (within what a small budget allows), the first call for the cut has
   * the core shrink the kept messages to head and tail to leave it, else half of it (rule 5 of
   * fit-budget.ts): `cut.keptTokens` changes, and the warnings say what was shrunk. In
   * `afterCompact` it only reads. Plugins read it through `summaryRoomLeft(run)` and
   * `summaryRoom(run)` once the cut is selected (`summarizeCut` does).
   */
  summaryRoomLeft(): number {
    return this.#run.summaryRoomLeft();
  }
  /** Compacted messages before the split turn (or before the cut), without the previous summary. */
  historyMessages(): T[] {
    return this.#run.historyMessages(this.plugin);
  }
  /**
   * Compacted messages of a split turn's early part (empty when the turn is not split); headed by
   * the turn's request when that is the newest one, kept ahead of the summary as well.
   */
  turnPrefixMessages(): T[] {
    return this.#run.turnPrefixMessages(this.plugin);
  }
  /**
   * True when the previous summary lies inside the split turn's early part (the newest turn split
   * again, its request kept ahead of that summary): `summarizeCut` then updates the summary's
   * split-turn part with the turn's new messages instead of summarising the summary again.
   */
  previousSummaryInTurn(): boolean {
    return this.#run.previousSummaryInTurn(this.plugin);
  }
  /** Every compacted message, oldest first. */
  compactedMessages(): T[] {
    return this.#run.compactedMessages(this.plugin);
  }
  /** Messages kept verbatim after the summary. */
  keptMessages(): T[] {
    return this.#run.keptMessages(this.plugin);
  }

  // --- One measure: the context as the provider counts it -------------------------------------

  /**
   * The provider's count of the input over ours, at least 1 (1 when the input carries no usage).
   * `tokensBefore` is the provider's usage figure plus counts of what followed it; it exceeds our
   * count by what no message shows (system prompt, tools) and, mostly, by another tokenizer
   * (Claude counts about 1.25x o200k on real sessions), so the difference scales with the text.
   */
  get providerRatio(): number {
    return this.#run.providerRatio;
  }
  /** Our count of some messages, as the provider would count them: the one measure for anything compared with the window. */
  providerTokens(countedTokens: number): number {
    return this.#run.providerTokens(countedTokens);
  }
  /** The inverse of `providerTokens`: how many of our tokens fit in `providerTokens` of the provider's. */
  countedTokens(providerTokens: number): number {
    return this.#run.countedTokens(providerTokens);
  }
  /** The working set as the provider counts it (see `providerTokens`). */
  get contextTokens(): number {
    return this.#run.contextTokens;
  }
  /**
   * The provider's tokens per token of ours for messages alone: the calibrated ratio
   * (`MessageTokenCounter.budgetRatio`: learned from the spans between usage figures, or the
   * host's; 1 to 4; 1 with neither). Unlike `providerRatio` it leaves out what no message shows
   * (system prompt, tools), which on Claude Code's transcripts is 15,000–30,000 tokens: sizes of
   * messages a plugin keeps (`keepRecentTokens`, a share of the window) convert with it.
   */
  get messageRatio(): number {
    return this.#run.messageRatio;
  }
  /** Our count of messages the provider counts as `providerTokens` (at `messageRatio`), rounded down. */
  countedMessageTokens(providerTokens: number): number {
    return Math.floor(providerTokens / this.#run.messageRatio);
  }

  // --- What a plugin may do, under its own name ----------------------------------------------

  /** Adds a warning to the result, prefixed with this plugin's name. */
  warn(message: string): void {
    this.#run.warn(this.plugin, message);
  }
  /** Stops the run; the input messages are returned untouched with this reason. */
  cancel(reason: string): void {
    this.#run.cancel(this.plugin, reason);
  }
  /**
   * Says why this plugin selected no cut (in `selectCut`); when no plugin selects one, the noop
   * result's reason quotes it after the plugin's name.
   */
  explainNoCut(reason: string): void {
    this.#run.explainNoCut(this.plugin, reason);
  }
  /**
   * Replaces the working set (e.g. with pruned tool outputs). Only before a cut is selected. With
   * `suffixOnly`, a run that ends with only this change is a noop, and a cut must keep messages
   * this change left as they were.
   */
  replaceMessages(messages: readonly T[]): void {
    this.#run.replaceMessages(this.plugin, messages);
  }
  /** Names the layer that ran (e.g. layered's `prune`), for the event. */
  setLayer(layer: string): void {
    this.#run.layer = layer;
  }
  /**
   * Replaces the previous summary the next summary updates (e.g. without a prefix this plugin
   * added to it), from `summarize` on.
   */
  setPreviousSummary(text: string): void {
    this.#run.previousSummary = text;
  }
  /** Asks the configured summarizer to summarise `messages` within `maxTokens`. */
  summarize(messages: readonly T[], options: SummarizeOptions = {}): Promise<string> {
    return this.#run.summarize(this.plugin, messages, options);
  }
}
