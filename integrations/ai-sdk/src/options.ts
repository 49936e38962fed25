/** The options of `compactionPrepareStep` and `compactModelMessages`, and the events they send. */
import { CompactionError, type CompactionPlugin, type CompactionResult, type Compactor, describeValue, ErrorCodes } from "@compaction/core";
import type { ModelMessage } from "ai";

export interface AiSdkCompactionOptions {
  /** The agent whose section of `.compactionrc` applies (and that plugins are told about). */
  readonly agent?: string;
  /** Where the config search starts. Default `process.cwd()`. */
  readonly cwd?: string;
  /** Load this config file (relative to `cwd`) instead of searching. */
  readonly configPath?: string;
  /**
   * Whether the config search may run the project's code: `.compactionrc.{js,mjs,cjs,ts}`,
   * `compaction.config.*`, and plugins or presets that are files or packages of the project.
   * Default true (the program is the user's own, as with ESLint or Vite). Pass false when `cwd`
   * is a folder the user has not vouched for (a cloned repository an agent works in): data-only
   * config (`.compactionrc` YAML/JSON, `package.json#compaction`) still applies, and each skipped
   * file is reported once as a `warning` event with code COMPACTION_CONFIG_UNTRUSTED.
   */
  readonly trusted?: boolean;
  /** Run this preset instead of the configured one (`safeguard`, `rolling`, `layered`, `sliding-window`, a package or a path). */
  readonly preset?: string;
  /** The model's context window in tokens. Default: the config's `contextWindow`. */
  readonly contextWindow?: number;
  /**
   * Tokens kept free for the model's reply: compaction brings the prompt under `contextWindow -
   * reserveTokens`. Default: the config's `reserveTokens`, at most a quarter of the window.
   */
  readonly reserveTokens?: number;
  /**
   * Plugins applied after the config's and the preset's, e.g. `summarizerAiSdk({ model })` from
   * `@compaction/plugin-summarizer-ai-sdk` to write summaries with a model.
   */
  readonly plugins?: readonly CompactionPlugin[];
  /** Decides which messages are pinned (never dropped, pruned or summarised). Default: none. */
  readonly isPinned?: (message: ModelMessage) => boolean;
  /** Told when a compaction starts and ends, and when something limited the result. */
  readonly on?: (event: AiSdkCompactionEvent) => void;
  /**
   * Use this compactor (built with `createAiSdkAdapter()`) instead of one from the config; `cwd`,
   * `configPath`, `preset`, `agent`'s section and `plugins` are then not read.
   */
  readonly compactor?: Compactor<ModelMessage>;
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

export type AiSdkCompactionEvent = CompactionStartEvent | CompactionEndEvent | CompactionWarningEvent;

function invalid(path: string, problem: string, hint: string): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/ai-sdk: ${problem}`, { path, hint });
}

/** Throws COMPACTION_INPUT_INVALID naming the option, what was expected and what was found. */
export function checkOptions(options: AiSdkCompactionOptions): void {
  if (typeof options !== "object" || options === null) {
    throw invalid("/", `expected an options object, found ${describeValue(options)}.`, "Pass e.g. { contextWindow: 128000 }.");
  }
  for (const key of ["contextWindow", "reserveTokens"] as const) {
    const value = options[key];
    const minimum = key === "contextWindow" ? 1 : 0;
    if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= minimum)) {
      throw invalid(`/${key}`, `${key} must be a whole number of at least ${minimum}, found ${describeValue(value)}.`, `Leave ${key} out to use the config's.`);
    }
  }
  if (options.contextWindow !== undefined && options.reserveTokens !== undefined && options.reserveTokens >= options.contextWindow) {
    throw invalid(
      "/reserveTokens",
      `reserveTokens (${options.reserveTokens}) must be below contextWindow (${options.contextWindow}).`,
      "The prompt is compacted to contextWindow - reserveTokens; keep some room for it.",
    );
  }
  if (options.trusted !== undefined && typeof options.trusted !== "boolean") {
    throw invalid("/trusted", `trusted must be true or false, found ${describeValue(options.trusted)}.`, "Pass true, false, or leave trusted out.");
  }
  for (const key of ["on", "isPinned"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw invalid(`/${key}`, `${key} must be a function, found ${describeValue(options[key])}.`, `Pass a function or leave ${key} out.`);
    }
  }
  if (options.plugins !== undefined && !Array.isArray(options.plugins)) {
    throw invalid("/plugins", `plugins must be an array of plugins, found ${describeValue(options.plugins)}.`, "Pass e.g. [summarizerAiSdk({ model })].");
  }
}
