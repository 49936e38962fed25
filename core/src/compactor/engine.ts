/**
 * What one compaction uses of its compactor. The stages of a run (compact.ts) read this, never
 * the `Compactor` class, so a run's way through the code is the chain in compact.ts.
 */
import type { FactsCache, MessageAdapter } from "../messages/adapter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import type { MessageTokenCounter } from "../tokens/message-tokens.js";
import type { CompactorHooks } from "./hooks.js";

export interface CompactionEngine<T> {
  readonly hooks: CompactorHooks<T>;
  readonly adapter: MessageAdapter<T>;
  readonly facts: FactsCache<T>;
  readonly tokens: MessageTokenCounter<T>;
  /** The compactor's summarizer (or its stand-in that fails with COMPACTION_SUMMARIZER_MISSING). */
  readonly summarizer: Summarizer;
  /** The longest summary a run asks for by default, before the run's budget caps it. */
  readonly summaryMaxTokens: number;
  /** The default context window for a run that passes none. */
  readonly contextWindow: number | undefined;
  /** The auto-compaction threshold's share of the usable window (the run's target is a share of it). */
  readonly autoCompact: { readonly threshold: number };
  /** The reserve for the reply at `contextWindow` (see `Compactor.reserveFor`). */
  reserveFor(contextWindow: number): number;
  /** What an empty summary message costs in this format (its wrapper text). */
  summaryOverheadTokens(): number;
  /** The recall tool shrink markers point at, or undefined. */
  recallTool(): string | undefined;
  /** True when an applied plugin declares the capability. */
  provides(capability: string): boolean;
}
