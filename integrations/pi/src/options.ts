/**
 * The extension's options: which `.compactionrc` section and preset to use, what pi should do
 * when the preset's compaction cannot be written, and whether to prune what is sent.
 */
import { type BackgroundMode, checkBackgroundOptions, CompactionError, DEFAULT_WAIT_MS, ErrorCodes } from "@compaction/core";
import type { ExtensionContext } from "./pi-types.js";

/** Environment variable naming the `.compactionrc` agent section (pi has no agent names). */
export const AGENT_ENV = "COMPACTION_AGENT";
/** Environment variable naming a preset to run instead of the configured one. */
export const PRESET_ENV = "COMPACTION_PRESET";
/** Environment variable turning the `context` pruning off (`off`, `false` or `0`). */
export const PRUNE_ENV = "COMPACTION_PI_PRUNE";
/** Environment variable choosing the fallback (`cancel` or `pi`). */
export const FALLBACK_ENV = "COMPACTION_PI_FALLBACK";
/** Environment variable for background compaction (`auto`, `on` or `off`). */
export const BACKGROUND_ENV = "COMPACTION_PI_BACKGROUND";

/**
 * What pi does when the preset produced nothing pi's compaction entry can hold (nothing to
 * compact, a failed or cancelled run, pinned messages kept from before the cut, a config error):
 * `cancel` leaves the session as it is; `pi` lets pi write its own summary with the model.
 */
export type PiFallback = "cancel" | "pi";

/** A message for the user: shown with `ctx.ui.notify` when pi has a UI, else on stderr (warnings and errors). */
export type PiReport = (level: "info" | "warning" | "error", message: string, ctx: ExtensionContext) => void;

export interface PiCompactionOptions {
  /**
   * The `.compactionrc` section (`agents.<name>`) to apply, or a function of pi's context that
   * picks one (OpenClaw: from `ctx.cwd`, the agent's workspace). Default: `$COMPACTION_AGENT`,
   * else none (the top level).
   */
  readonly agent?: string | ((ctx: ExtensionContext) => string | undefined);
  /** Run this preset instead of the configured one. Default: `$COMPACTION_PRESET`, else the config's. */
  readonly preset?: string;
  /** Where the `.compactionrc` search starts. Default: pi's working directory (`ctx.cwd`). */
  readonly cwd?: string;
  /** Default: `$COMPACTION_PI_FALLBACK`, else `cancel`. See PiFallback. */
  readonly fallback?: PiFallback;
  /**
   * Replace old tool outputs in what is sent to the model (layered's layer 1, with
   * `options.layered` from `.compactionrc`); the session file is never changed. Default: on,
   * unless `$COMPACTION_PI_PRUNE` is `off`.
   */
  readonly pruneContext?: boolean;
  /** Where messages for the user go. Default: `ctx.ui.notify`, or stderr without a UI. */
  readonly report?: PiReport;
  /**
   * Whether `.compactionrc` may run the project's code (code config files, plugin and preset
   * files or packages inside the project). `"pi"` (default): as pi's project trust decides, see
   * project-trust.ts. `true` / `false`: always / never, whatever pi says.
   */
  readonly trustProject?: PiTrustProject;
  /**
   * Background compaction (docs/background-compaction.md): `"auto"` (default) prepares the
   * compaction at the end of a turn past the prepare mark (before pi's threshold, its window less
   * its `compaction.reserveTokens`), unless the summarizer is the extractive one, so that pi's next
   * compaction (its threshold, `/compact`, `session.compact()`) gets it at once, without a new
   * model call; `true`: always; `false`: compact when pi asks. Default: `$COMPACTION_PI_BACKGROUND`
   * (`auto`, `on`, `off`), else `auto`.
   */
  readonly background?: BackgroundMode;
  /** The longest pi's compaction waits for the one being prepared; then it compacts on its own. Default 30,000 ms. */
  readonly waitMs?: number;
}

/** See PiCompactionOptions.trustProject. */
export type PiTrustProject = "pi" | boolean;

/** The options with defaults and environment applied. */
export interface ResolvedPiCompactionOptions {
  readonly agent: (ctx: ExtensionContext) => string | undefined;
  readonly preset: string | undefined;
  readonly cwd: string | undefined;
  readonly fallback: PiFallback;
  readonly pruneContext: boolean;
  readonly report: PiReport;
  readonly trustProject: PiTrustProject;
  readonly background: BackgroundMode;
  readonly waitMs: number;
}

const FALLBACKS: readonly PiFallback[] = ["cancel", "pi"];
const OFF_VALUES = new Set(["off", "false", "0", "no"]);
const ON_VALUES = new Set(["on", "true", "1", "yes"]);

/**
 * Fills in defaults from `env`. Throws COMPACTION_INPUT_INVALID for an unknown fallback or a
 * non-string agent/preset, naming the option or variable to fix.
 */
export function resolvePiCompactionOptions(
  options: PiCompactionOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedPiCompactionOptions {
  const agent = options.agent ?? nonEmpty(env[AGENT_ENV]);
  if (agent !== undefined && typeof agent !== "string" && typeof agent !== "function") {
    throw invalid("agent", `expected a string or a function of pi's context, found ${typeof agent}`, "Pass the .compactionrc agent name.");
  }
  const preset = options.preset ?? nonEmpty(env[PRESET_ENV]);
  if (preset !== undefined && typeof preset !== "string") {
    throw invalid("preset", `expected a preset name, found ${typeof preset}`, "Pass a name such as 'rolling' or 'safeguard'.");
  }
  const fallbackSource = options.fallback === undefined ? `$${FALLBACK_ENV}` : "fallback";
  const fallback = options.fallback ?? nonEmpty(env[FALLBACK_ENV]) ?? "cancel";
  if (!FALLBACKS.includes(fallback as PiFallback)) {
    throw invalid(fallbackSource, `expected "cancel" or "pi", found ${JSON.stringify(fallback)}`, 'Use "cancel" (leave the session as it is) or "pi" (let pi summarise with the model).');
  }
  const trustProject = options.trustProject ?? "pi";
  if (trustProject !== "pi" && typeof trustProject !== "boolean") {
    throw invalid("trustProject", `expected "pi", true or false, found ${JSON.stringify(trustProject)}`, 'Leave it out to follow pi\'s project trust, or pass true or false.');
  }
  const pruneEnv = nonEmpty(env[PRUNE_ENV]);
  const pruneContext = options.pruneContext ?? !(pruneEnv !== undefined && OFF_VALUES.has(pruneEnv.toLowerCase()));
  const background = options.background ?? backgroundFromEnv(nonEmpty(env[BACKGROUND_ENV]));
  checkBackgroundOptions({ background, ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }) }, "the pi compaction extension");
  return {
    agent: typeof agent === "function" ? agent : () => agent,
    preset,
    cwd: options.cwd,
    fallback: fallback as PiFallback,
    pruneContext,
    report: options.report ?? defaultReport,
    trustProject,
    background,
    waitMs: options.waitMs ?? DEFAULT_WAIT_MS,
  };
}

/** `$COMPACTION_PI_BACKGROUND`: `auto` (or unset), `on`/`true`/`1`, `off`/`false`/`0`/`no`. */
function backgroundFromEnv(value: string | undefined): BackgroundMode {
  if (value === undefined || value.toLowerCase() === "auto") return "auto";
  if (OFF_VALUES.has(value.toLowerCase())) return false;
  if (ON_VALUES.has(value.toLowerCase())) return true;
  throw invalid(`$${BACKGROUND_ENV}`, `expected "auto", "on" or "off", found ${JSON.stringify(value)}`, "Unset it for auto, or set it to on or off.");
}

/** Shows the message in pi's UI; without one, writes warnings and errors to stderr. */
export const defaultReport: PiReport = (level, message, ctx) => {
  if (ctx.hasUI) {
    ctx.ui.notify(message, level);
    return;
  }
  if (level !== "info") process.stderr.write(`[compaction] ${level}: ${message}\n`);
};

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function invalid(option: string, problem: string, hint: string): CompactionError {
  const where = option.startsWith("$") ? "environment variable" : "option";
  return new CompactionError(ErrorCodes.INPUT_INVALID, `Invalid ${where} '${option}' of the pi compaction extension: ${problem}.`, {
    ...(option.startsWith("$") ? {} : { path: `/${option}` }),
    hint,
  });
}
