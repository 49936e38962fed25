/**
 * `compaction autocompact [on|off]`: shows whether the session compacts itself when its context
 * passes the threshold, or turns that on or off for this session only (a pi `custom` entry
 * appended to the session file; the config's `autoCompact.enabled` stays the default).
 */
import { usableWindow } from "@compaction/core";
import { appendEntries, autoCompactEntry, buildContext, sessionAutoCompact } from "@compaction/transcript";
import type { CommandContext } from "../command-context.js";
import { appendToDatabase } from "../database-target.js";
import { type CommandCall, type CommandScope, defineCommand } from "../command-scaffold.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { configOf, configSummary, type ConfigSummary } from "../load-compactor.js";
import { formatTokens, usableWindowNote } from "../output.js";
import { upgradeBeforeWriting } from "./session-upgrade.js";

interface AutocompactOptions {
  readonly session?: string;
  readonly agent?: string;
  readonly json?: boolean;
}

/** What `autocompact` reports (`--json` prints it as is). */
export interface AutocompactState {
  readonly session: { readonly path: string; readonly id: string };
  readonly enabled: boolean;
  /** `session`: this session's own setting; `config`: the config's (or the default, on). */
  readonly source: "session" | "config";
  /** What the config alone says. */
  readonly configEnabled: boolean;
  readonly threshold: number;
  /** The threshold in tokens: its share of the usable window (core's `autoCompactTokens`). */
  readonly thresholdTokens: number;
  readonly contextWindow: number;
  /** The window the threshold is a share of: the context window, or less when the reserve for the reply takes over a tenth of it. */
  readonly usableWindow: number;
  readonly preset: string;
  /** Which configuration applied: the file, the agent's section, what the project may not run. */
  readonly config: ConfigSummary;

  /** True when this run appended a setting to the session file. */
  readonly changed: boolean;
}

/** `compaction autocompact [on|off]`. */
export const autocompactCommand = defineCommand({
  name: "autocompact",
  arguments: [["[on|off]", "turn auto-compaction on or off for this session; leave out to show it"]],
  description: "show, or set for this session, whether the context is compacted automatically past the threshold",
  session: true,
  agent: true,
  parse: ({ args: [value] }: CommandCall<[string | undefined], AutocompactOptions>) => parseSwitch(value),
  run: autocompact,
  text: (state, { input: wanted, context }) => renderState(state, wanted !== undefined, context),
});

function parseSwitch(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const word = value.trim().toLowerCase();
  if (word === "on") return true;
  if (word === "off") return false;
  throw new CliError(ExitCode.USAGE, `autocompact expects 'on' or 'off', but got '${value}'.`, "Run 'compaction autocompact' to show the setting, or 'compaction autocompact off' to turn it off for this session.");
}

/** Reads the setting, and with on or off writes it (`wanted`: undefined to only read it). */
async function autocompact(scope: CommandScope<AutocompactOptions, boolean | undefined>): Promise<AutocompactState> {
  const { session, input: wanted } = scope;
  const { path } = session;
  session.requirePiFormat(wanted === undefined ? "read the session's auto-compaction setting" : "set auto-compaction");
  if (wanted !== undefined) session.refuseOpenClawSnapshot("set auto-compaction");
  const parsed = session.entries();
  const own = sessionAutoCompact(buildContext(parsed.entries, { file: path }).branch);
  const compactor = await scope.compactor();
  const config = configOf(compactor);
  const window = compactor.contextWindow ?? config.contextWindow;
  const configEnabled = compactor.autoCompact.enabled;
  const current = own ?? configEnabled;
  // Written even when it equals the config: the session then keeps it if the config changes.
  const changed = wanted !== undefined && own !== wanted;
  if (changed) {
    session.assertWholeBranch();
    const database = session.database;
    if (database !== undefined) {
      await appendToDatabase(database, [autoCompactEntry(wanted)]);
    } else {
      await upgradeBeforeWriting(path, parsed, scope.context.io);
      await appendEntries(path, [autoCompactEntry(wanted)]);
    }
  }
  return {
    session: { path: session.shown, id: parsed.header.id },
    enabled: wanted ?? current,
    source: wanted === undefined && own === undefined ? "config" : "session",
    configEnabled,
    threshold: compactor.autoCompact.threshold,
    thresholdTokens: compactor.autoCompactTokens(window),
    contextWindow: window,
    usableWindow: Math.floor(usableWindow(window, compactor.reserveFor(window))),
    preset: config.preset,
    config: configSummary(config),
    changed,
  };
}

function renderState(state: AutocompactState, requested: boolean, { out: c }: CommandContext): string {
  const onOff = state.enabled ? c.green("on") : c.yellow("off");
  const at = `at ${Math.round(state.threshold * 100)}% of the window (${formatTokens(state.thresholdTokens)} tokens${usableWindowNote(state.usableWindow, state.contextWindow)}), preset ${state.preset}`;
  const source =
    state.source === "session"
      ? `set for this session${state.configEnabled === state.enabled ? "" : ` (the config says ${state.configEnabled ? "on" : "off"})`}`
      : "from the config";
  const lead = state.changed ? `${c.green("Set:")} auto-compaction` : "Auto-compaction";
  const unchanged = requested && !state.changed ? c.dim(" (already set; nothing written)") : "";
  return `${lead} ${onOff} ${at}, ${source}${unchanged}.\n${c.dim(`Session ${state.session.id} (${state.session.path})`)}\n`;
}
