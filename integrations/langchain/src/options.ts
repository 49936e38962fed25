/** The options of `compactionMiddleware`, and the events it sends. */
import {
  type BackgroundEvent,
  checkHostOptions,
  CompactionError,
  type CompactionResult,
  type Compactor,
  describeValue,
  ErrorCodes,
  type HostCompactionOptions,
} from "@compaction/core";
import type { BaseMessage } from "@langchain/core/messages";

export interface LangChainCompactionOptions extends HostCompactionOptions<BaseMessage, LangChainCompactionEvent> {
  /** Decides which messages are pinned (never dropped, pruned or summarised). Default: `additional_kwargs.pinned === true`. */
  readonly isPinned?: (message: BaseMessage) => boolean;
  /**
   * Use this compactor (built with `createLangChainAdapter()`) instead of one from the config;
   * `cwd`, `configPath`, `preset`, `agent`'s section, `plugins` and `isPinned` are then not read.
   */
  readonly compactor?: Compactor<BaseMessage>;
  /**
   * Mark where each model call's stable prefix ends for Anthropic's prompt cache: a content
   * block's `cache_control` on the summary and on the newest message (core's `cacheBreakpoints`),
   * which ChatAnthropic sends as it is. Only the call is marked, never the agent's state. Turn it on
   * with ChatAnthropic; other providers may reject the field. Default false.
   */
  readonly markCache?: boolean;
}

/** Sent before a compaction runs. */
export interface CompactionStartEvent {
  readonly type: "compaction-start";
  /** What the model call would carry now: messages plus system prompt and tool definitions. */
  readonly tokens: number;
  /** The size above which it compacts: the preset's auto-compaction share of the window. */
  readonly threshold: number;
  readonly contextWindow: number;
  /** Messages in the agent's state now. */
  readonly messages: number;
  /** `state`: the agent's history is replaced (beforeModel). `request`: only this call's messages are (the window would be exceeded). */
  readonly scope: "state" | "request";
  /** Only for a compaction prepared in the background, put in place now: when it started (ms since the epoch), the size it was prepared at, and the messages appended since. */
  readonly prepared?: { readonly startedAt: number; readonly tokens: number; readonly appended: number };
}

/** Sent after every compaction that started, whatever came of it. */
export interface CompactionEndEvent {
  readonly type: "compaction-end";
  /** The compactor's result: `status` `compacted` when the messages changed. */
  readonly result: CompactionResult<BaseMessage>;
  /** What the model call carries after (before, when nothing changed). */
  readonly tokens: number;
  readonly scope: "state" | "request";
}

/** Something limited the result: a failed compaction, or a prompt still over the threshold. */
export interface CompactionWarningEvent {
  readonly type: "warning";
  readonly message: string;
  /** The error code behind it, when there is one. */
  readonly code: string | null;
}

/**
 * A compaction prepared in the background (`background`): `background.type` is `start`, `ready`,
 * `waiting` then `wait` (a model call that could not be made without it waited), or `dropped` (it
 * no longer applied: never put in place; `cost` says what it cost). Putting one in place is a
 * `compaction-start` (with `prepared`) and a `compaction-end`.
 */
export interface BackgroundCompactionEvent {
  readonly type: "background";
  readonly background: BackgroundEvent;
}

export type LangChainCompactionEvent = CompactionStartEvent | CompactionEndEvent | CompactionWarningEvent | BackgroundCompactionEvent;

/** Throws COMPACTION_INPUT_INVALID naming the option, what was expected and what was found. */
export function checkOptions(options: LangChainCompactionOptions): void {
  checkHostOptions(options, { host: "@compaction/langchain", pluginExample: "summarizerOpenAI({ model })" });
  for (const key of ["agent", "cwd", "configPath", "preset"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "string") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/langchain: ${key} must be a string, found ${describeValue(options[key])}.`, {
        path: `/${key}`,
        hint: `Pass a string or leave ${key} out.`,
      });
    }
  }
  if (options.markCache !== undefined && typeof options.markCache !== "boolean") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/langchain: markCache must be true or false, found ${describeValue(options.markCache)}.`, {
      path: "/markCache",
      hint: "Pass markCache: true with ChatAnthropic, or leave it out.",
    });
  }
}
