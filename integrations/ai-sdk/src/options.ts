/** The options of `compactionPrepareStep` and `compactModelMessages`, and the events they send. */
import {
  type BackgroundEvent,
  checkHostOptions,
  CompactionError,
  type CompactionPlugin,
  type CompactionResult,
  type Compactor,
  describeValue,
  ErrorCodes,
  type HostCompactionOptions,
} from "@compaction/core";
import type { ModelMessage } from "ai";

export interface AiSdkCompactionOptions extends HostCompactionOptions<ModelMessage, AiSdkCompactionEvent> {
  /**
   * Tokens kept free for the model's reply: compaction brings the prompt under `contextWindow -
   * reserveTokens`; at most half the window. Default: the config's `reserveTokens`, else
   * `maxOutputTokens` (at most a quarter of the window), else the smaller of 16,384 and an eighth
   * of the window.
   */
  readonly reserveTokens?: number;
  /**
   * The `maxOutputTokens` you pass to `generateText` / `streamText` (or the model's output limit):
   * the reply's reserve when neither `reserveTokens` nor the config sets one.
   */
  readonly maxOutputTokens?: number;
  /**
   * Plugins applied after the config's and the preset's, e.g. `summarizerAiSdk({ model })` from
   * `@compaction/plugin-summarizer-ai-sdk` to write summaries with a model.
   */
  readonly plugins?: readonly CompactionPlugin[];
  /** Decides which messages are pinned (never dropped, pruned or summarised). Default: none. */
  readonly isPinned?: (message: ModelMessage) => boolean;
  /**
   * Use this compactor (built with `createAiSdkAdapter()`) instead of one from the config; `cwd`,
   * `configPath`, `preset`, `agent`'s section and `plugins` are then not read.
   */
  readonly compactor?: Compactor<ModelMessage>;
  /**
   * Mark where each step's stable prefix ends for the Anthropic provider's prompt cache
   * (`providerOptions.anthropic.cacheControl` on the summary, on the last message unchanged since
   * the previous step and on the newest message; core's `cacheBreakpoints`). Turn it on with
   * `@ai-sdk/anthropic` models; other providers ignore the key. Markers are applied to what each
   * step sends and taken off again when ai 7 carries those messages forward. Default false.
   */
  readonly markCache?: boolean;
}

/** Sent before a compaction runs. */
export interface CompactionStartEvent {
  readonly type: "compaction-start";
  /** The prompt's size now (the provider's figure where a step reported one). */
  readonly tokens: number;
  /** The size above which it compacts: the preset's auto-compaction share of the window. */
  readonly threshold: number;
  readonly contextWindow: number;
  /** Messages in the prompt now. */
  readonly messages: number;
  /** The step about to run (prepareStep), or null (compactModelMessages). */
  readonly stepNumber: number | null;
  /** Only for a compaction prepared in the background, put in place now: when it started (ms since the epoch), the size it was prepared at, and the messages appended since. */
  readonly prepared?: { readonly startedAt: number; readonly tokens: number; readonly appended: number };
}

/** Sent after every compaction that started, whatever came of it. */
export interface CompactionEndEvent {
  readonly type: "compaction-end";
  /** The compactor's result: `status` `compacted` when the messages changed. */
  readonly result: CompactionResult<ModelMessage>;
  /** The prompt's size after (before, when nothing changed). */
  readonly tokens: number;
  readonly stepNumber: number | null;
}

/** Something limited the result: a failed compaction, or a prompt still over the window. */
export interface CompactionWarningEvent {
  readonly type: "warning";
  readonly message: string;
  /** The error code behind it, when there is one (`COMPACTION_SUMMARIZER_FAILED`, `COMPACTION_CONTEXT_OVERFLOW`, ...). */
  readonly code: string | null;
  readonly stepNumber: number | null;
}

/**
 * A compaction prepared in the background (`background`): `background.type` is `start` (at the
 * step it started at), `ready`, `waiting` then `wait` (a step that could not be sent without it
 * waited), or `dropped` (it no longer applied: never put in place; `cost` says what it cost).
 * Putting one in place is a `compaction-start` (with `prepared`) and a `compaction-end`.
 */
export interface BackgroundCompactionEvent {
  readonly type: "background";
  readonly background: BackgroundEvent;
  /** The step that started it, waited, or found it stale; null for compactModelMessages. */
  readonly stepNumber: number | null;
}

export type AiSdkCompactionEvent = CompactionStartEvent | CompactionEndEvent | CompactionWarningEvent | BackgroundCompactionEvent;

/** Throws COMPACTION_INPUT_INVALID naming the option, what was expected and what was found. */
export function checkOptions(options: AiSdkCompactionOptions): void {
  checkHostOptions(options, { host: "@compaction/ai-sdk", pluginExample: "summarizerAiSdk({ model })" });
  if (options.markCache !== undefined && typeof options.markCache !== "boolean") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/ai-sdk: markCache must be true or false, found ${describeValue(options.markCache)}.`, {
      path: "/markCache",
      hint: "Pass markCache: true with Anthropic models, or leave it out.",
    });
  }
}
