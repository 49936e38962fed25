/**
 * The context window a command measures and compacts a session at. The first that applies wins:
 *
 * 1. `option`: the window given on the command line (`--window` of `compact`, `context status`
 *    and `compare`).
 * 2. `config`: `contextWindow` set in the project's config (at the top level or in the agent's
 *    section): the user's own statement, which may deliberately differ from the model's (to
 *    compact earlier, or before moving the session to a smaller model).
 * 3. `session`: the window the session records for its model (a Codex rollout's
 *    `model_context_window`), when the config's own reserveTokens (if it sets one) fits it.
 * 4. `default`: the config's default (200,000), which no setting chose.
 */
import { type Compactor, describeError } from "@compaction/core";
import { countOption } from "./command-context.js";
import type { Declaration } from "./command-scaffold.js";
import type { CliIo } from "./io.js";
import { configOf } from "./load-compactor.js";
import { formatTokens } from "./output.js";

/** `--window`, as `compact` and `context status` declare it, `what` saying what the window is for. */
export function windowOption(what: string): Declaration {
  return ["--window <tokens>", `the model's context window to ${what} (default: the config's contextWindow when it sets one, else the window the session records, else 200,000)`];
}

/** The `--window` given, checked as `compare` checks its own: a whole number of at least 1, or undefined when left out. */
export function parseWindow(text: string | undefined): number | undefined {
  return countOption(text, "--window", "Pass the model's context window in tokens, e.g. --window 128000.");
}

/** Where a command's window came from (see the list above). */
export type ContextWindowSource = "option" | "config" | "session" | "default";

export interface ContextWindowChoice {
  readonly tokens: number;
  readonly source: ContextWindowSource;
}

/**
 * The window for a session whose transcript records `recorded` (null: none), with `given` from
 * the command line. A recorded window that the config's reserveTokens does not fit is not used,
 * and stderr says so.
 */
export function chooseContextWindow(compactor: Compactor<unknown>, recorded: number | null, io: CliIo, given?: number): ContextWindowChoice {
  if (given !== undefined) return { tokens: given, source: "option" };
  const config = configOf(compactor);
  const configured = compactor.contextWindow ?? config.contextWindow;
  if (config.sources.contextWindow.from !== "default") return { tokens: configured, source: "config" };
  if (recorded === null) return { tokens: configured, source: "default" };
  try {
    compactor.reserveFor(recorded);
    return { tokens: recorded, source: "session" };
  } catch (error) {
    // The config's own reserveTokens does not fit the recorded window: the config wins over the recording.
    io.stderr.write(`compaction: the session records a context window of ${formatTokens(recorded)} tokens, but ${lowerFirst(describeError(error).replace(/\.$/, ""))}; using the default ${formatTokens(configured)}.\n`);
    return { tokens: configured, source: "default" };
  }
}

/** The `Window` line's text for a window the session chose (else null: the config's window goes unsaid, as before). */
export function recordedWindowNote(choice: ContextWindowChoice): string | null {
  return choice.source === "session" ? `${formatTokens(choice.tokens)} tokens, the model's window as the session records it (contextWindow in the config overrides it)` : null;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
