import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import type { CompactionTrigger } from "../event.js";
import type { FactsCache, MessageFacts } from "../messages/adapter.js";
import type { CheckedCut } from "../cut/cut.js";
import type { MessageView } from "../cut/message-view.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import type { MessageTokenCounter } from "../tokens/message-tokens.js";

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
  readonly budget: number;
  readonly tokensBefore: number;
  readonly summaryOverheadTokens: number;
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
 * The state of one compaction, passed to every hook. Plugins read the working set through it,
 * may replace the working set (`replaceMessages`, in `beforeCompact`), cancel, warn, and ask
 * the configured summarizer for a summary.
 */
export class CompactionRun<T> {
  readonly input: CompactInput<T>;
  readonly contextWindow: number;
  /** Most tokens the compacted context may hold (context window minus reserve). */
  readonly budget: number;
  /** Context size before the run, using the provider's usage where the transcript has it. */
  readonly tokensBefore: number;
  /** Tokens the summary message's own wrapping costs in this format (beyond the summary text). */
  readonly summaryOverheadTokens: number;
  readonly warnings: string[] = [];
  /** Scratch space for plugins, keyed by plugin name. */
  readonly state = new Map<string, unknown>();
  /** The checked cut, set after `selectCut`. */
  cut: CheckedCut | null = null;
  /** Text of the latest summary among the compacted messages, to be updated rather than re-summarised. */
  previousSummary: string | undefined;
  /** Which layer ran (plugins set it; defaults to the cut's layer). */
  layer: string | null = null;
  /** The plugin whose hook is running now (set by the compactor). */
  activePlugin = "core";
  /** Plugin that last replaced the working set. */
  modifiedBy: string | null = null;

  readonly #facts: FactsCache<T>;
  readonly #tokens: MessageTokenCounter<T>;
  readonly #summarizer: Summarizer;
  readonly #summaryMaxTokens: number;
  #messages: readonly T[];
  #view: MessageView | null = null;
  #cancelled: { reason: string; plugin: string } | null = null;
  readonly #noCutReasons: string[] = [];

  constructor(init: RunInit<T>) {
    this.input = init.input;
    this.contextWindow = init.contextWindow;
    this.budget = init.budget;
    this.tokensBefore = init.tokensBefore;
    this.summaryOverheadTokens = init.summaryOverheadTokens;
    this.#facts = init.facts;
    this.#tokens = init.tokens;
    this.#summarizer = init.summarizer;
    this.#summaryMaxTokens = init.summaryMaxTokens;
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
   * Replaces the working set (e.g. with pruned tool outputs). Only before a cut is selected. With
   * `suffixOnly`, a run that ends with only this change is a noop, and a cut must keep messages
   * this change left as they were.
   */
  replaceMessages(messages: readonly T[]): void {
    if (this.cut) {
      throw new CompactionError(
        ErrorCodes.PLUGIN_FAILED,
        `Plugin '${this.activePlugin}' replaced the messages after the cut was selected; replace them in beforeCompact.`,
        { plugin: this.activePlugin },
      );
    }
    this.#messages = messages;
    this.#view = null;
    this.modifiedBy = this.activePlugin;
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
    return Math.max(0, this.tokensBefore - this.#tokens.total(this.input.messages));
  }

  factsOf(message: T): MessageFacts {
    return this.#facts.of(message);
  }

  tokensOf(message: T): number {
    return this.#tokens.count(message);
  }

  /** Adds a warning to the result, prefixed with the running plugin's name. */
  warn(message: string): void {
    this.warnings.push(`[${this.activePlugin}] ${message}`);
  }

  /** Stops the run; the input messages are returned untouched with this reason. */
  cancel(reason: string): void {
    this.#cancelled ??= { reason, plugin: this.activePlugin };
  }

  get cancelled(): { readonly reason: string; readonly plugin: string } | null {
    return this.#cancelled;
  }

  /**
   * Says why this plugin selected no cut (in `selectCut`); when no plugin selects one, the noop
   * result's reason quotes it after the plugin's name.
   */
  explainNoCut(reason: string): void {
    this.#noCutReasons.push(`${this.activePlugin}: ${reason.trim().replace(/\.$/, "")}`);
  }

  /** What plugins said about selecting no cut, oldest first, each as `plugin: reason`. */
  get noCutReasons(): readonly string[] {
    return this.#noCutReasons;
  }

  /** Compacted messages before the split turn (or before the cut), without the previous summary. */
  historyMessages(): T[] {
    const cut = this.#requireCut();
    const end = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
    return this.#compacted((i) => i < end, true);
  }

  /** Compacted messages of a split turn's early part (empty when the turn is not split). */
  turnPrefixMessages(): T[] {
    const cut = this.#requireCut();
    if (!cut.isSplitTurn) return [];
    return this.#compacted((i) => i >= cut.turnStartIndex, false);
  }

  /** Every compacted message, oldest first. */
  compactedMessages(): T[] {
    return this.#compacted(() => true, false);
  }

  /** Messages kept verbatim after the summary. */
  keptMessages(): T[] {
    return this.#messages.slice(this.#requireCut().firstKeptIndex);
  }

  /** Messages kept before the summary (system prompt, pinned ones and their tool partners). */
  preservedMessages(): T[] {
    return this.#requireCut().preservedIndices.map((i) => this.#messages[i] as T);
  }

  /** Asks the configured summarizer to summarise `messages` within `maxTokens`. */
  summarize(messages: readonly T[], options: SummarizeOptions = {}): Promise<string> {
    const kind = options.kind ?? "history";
    const previousSummary = options.previousSummary ?? (kind === "history" ? this.previousSummary : undefined);
    const summarizer = this.#summarizer;
    const plugin = this.activePlugin;
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

  #requireCut(): CheckedCut {
    if (!this.cut) {
      throw new CompactionError(
        ErrorCodes.PLUGIN_FAILED,
        `Plugin '${this.activePlugin}' asked for the cut's messages before a cut was selected; use them in summarize or afterCompact.`,
        { plugin: this.activePlugin },
      );
    }
    return this.cut;
  }

  #compacted(keep: (index: number) => boolean, withoutPreviousSummary: boolean): T[] {
    const cut = this.#requireCut();
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
