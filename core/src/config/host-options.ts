/**
 * What a framework integration (`@compaction/ai-sdk`, `@compaction/langchain`) takes to build its
 * compactor from `.compactionrc`, and the one check of those options. Each integration extends
 * it with its message type and events; the fields and their meaning are the same everywhere.
 */
import type { Compactor } from "../compactor/compactor.js";
import type { CompactionPlugin } from "../compactor/plugin.js";
import { replyReserveTokens } from "../compactor/reply-reserve.js";
import { CompactionError, ErrorCodes } from "../errors.js";
import { type BackgroundMode, checkBackgroundOptions } from "../host/background.js";
import type { ConfigWarning } from "./project-trust.js";
import { describeValue } from "./schema-problems.js";
import type { ResolvedConfig } from "./types.js";

export interface HostCompactionOptions<T, E> {
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
   * Tokens kept free for the model's reply, at most half the window. Default: the config's
   * `reserveTokens`, else the window's own reserve (`replyReserveTokens`: `maxOutputTokens` where
   * given, else the smaller of 16,384 and an eighth of the window).
   */
  readonly reserveTokens?: number;
  /**
   * The most tokens the model writes in one reply (the `maxOutputTokens` the host sends, or the
   * model's limit): the reserve when neither `reserveTokens` nor the config sets one.
   */
  readonly maxOutputTokens?: number;
  /** Plugins applied after the config's and the preset's (e.g. a model summarizer). */
  readonly plugins?: readonly CompactionPlugin[];
  /** Decides which messages are pinned (never dropped, pruned or summarised). */
  readonly isPinned?: (message: T) => boolean;
  /** Told when a compaction starts and ends, and when something limited the result. */
  readonly on?: (event: E) => void;
  /** Use this compactor instead of one from the config; the config options are then not read. */
  readonly compactor?: Compactor<T>;
  /**
   * Background compaction (docs/background-compaction.md): `"auto"` (default) prepares a
   * compaction past the prepare mark while the agent goes on, unless the summarizer is the
   * extractive one, and puts it in place at the threshold with what was appended since; `true`:
   * always; `false`: compact at the threshold, the agent waiting for the summary.
   */
  readonly background?: BackgroundMode;
  /** The longest a request that cannot be sent otherwise waits for the compaction in flight, then the no-model summary. Default 30,000 ms. */
  readonly waitMs?: number;
  /** The provider's prompt-cache lifetime: past it since the last request, a ready compaction is put in place early. Default 300,000 ms; `null`: never. */
  readonly cacheTtlMs?: number | null;
}

export interface HostOptionsCheck {
  /** The integration's package name, which starts each message. */
  readonly host: string;
  /** A plugin call to show in the hint for a bad `plugins`, e.g. `summarizerAiSdk({ model })`. */
  readonly pluginExample: string;
}

/**
 * Throws COMPACTION_INPUT_INVALID naming the option (its JSON path), what was expected and what
 * was found: the numbers, `trusted`, the callbacks and `plugins`.
 */
export function checkHostOptions<T, E>(options: HostCompactionOptions<T, E>, { host, pluginExample }: HostOptionsCheck): void {
  const invalid = (path: string, problem: string, hint: string) =>
    new CompactionError(ErrorCodes.INPUT_INVALID, `${host}: ${problem}`, { path, hint });
  if (typeof options !== "object" || options === null) {
    throw invalid("/", `expected an options object, found ${describeValue(options)}.`, "Pass e.g. { contextWindow: 128000 }.");
  }
  for (const key of ["contextWindow", "reserveTokens", "maxOutputTokens"] as const) {
    const value = options[key];
    const minimum = key === "reserveTokens" ? 0 : 1;
    if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= minimum)) {
      throw invalid(`/${key}`, `${key} must be a whole number of at least ${minimum}, found ${describeValue(value)}.`, `Leave ${key} out to use the config's.`);
    }
  }
  // A reserve that cannot fit the window given beside it is an error now, not at every step.
  if (options.contextWindow !== undefined) replyReserveTokens(options.contextWindow, { reserveTokens: options.reserveTokens, source: { name: `the reserveTokens option of ${host}`, path: "/reserveTokens" } });
  if (options.trusted !== undefined && typeof options.trusted !== "boolean") {
    throw invalid("/trusted", `trusted must be true or false, found ${describeValue(options.trusted)}.`, "Pass true, false, or leave trusted out.");
  }
  for (const key of ["on", "isPinned"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw invalid(`/${key}`, `${key} must be a function, found ${describeValue(options[key])}.`, `Pass a function or leave ${key} out.`);
    }
  }
  checkBackgroundOptions(options, host);
  if (options.plugins !== undefined && !Array.isArray(options.plugins)) {
    throw invalid("/plugins", `plugins must be an array of plugins, found ${describeValue(options.plugins)}.`, `Pass e.g. [${pluginExample}].`);
  }
}

/**
 * What the config of a compactor built by `createCompactor` skipped (project code in an untrusted
 * folder); none for a compactor built otherwise.
 */
export function configWarnings<T>(compactor: Compactor<T>): readonly ConfigWarning[] {
  return (compactor.config as ResolvedConfig | undefined)?.warnings ?? [];
}
