/**
 * `compaction autocompact [on|off]`: shows whether the session compacts itself when its context
 * passes the threshold, or turns that on or off for this session only (a pi `custom` entry
 * appended to the session file; the config's `autoCompact.enabled` stays the default).
 */
import { appendEntries, autoCompactEntry, buildContext, sessionAutoCompact } from "@compaction/transcript";
import type { Command } from "commander";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { configOf, configSummary, type ConfigSummary, loadCompactor } from "../load-compactor.js";
import { formatTokens } from "../output.js";
import { refuseOpenClawSnapshot } from "../openclaw-target.js";
import { assertWholeBranch, readTargetSession, requirePiFormat, resolveTarget } from "../session-target.js";
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
  readonly thresholdTokens: number;
  readonly preset: string;
  /** Which configuration applied: the file, the agent's section, what the project may not run. */
  readonly config: ConfigSummary;

  /** True when this run appended a setting to the session file. */
  readonly changed: boolean;
}

/** Adds `autocompact` to the program. */
export function registerAutocompact(program: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  program
    .command("autocompact")
    .argument("[on|off]", "turn auto-compaction on or off for this session; leave out to show it")
    .description("show, or set for this session, whether the context is compacted automatically past the threshold")
    .option(...SESSION_OPTION)
    .option(...AGENT_OPTION)
    .option("--json", "print one JSON object instead of text")
    .action(async (value: string | undefined, options: AutocompactOptions, command: Command) => {
      const context = commandContext(command, io);
      const wanted = parseSwitch(value);
      const state = await autocompact(context, wanted, options);
      io.stdout.write(options.json === true ? `${JSON.stringify(state, null, 2)}\n` : renderState(state, wanted !== undefined, context));
      done(ExitCode.OK);
    });
}

function parseSwitch(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const word = value.trim().toLowerCase();
  if (word === "on") return true;
  if (word === "off") return false;
  throw new CliError(ExitCode.USAGE, `autocompact expects 'on' or 'off', but got '${value}'.`, "Run 'compaction autocompact' to show the setting, or 'compaction autocompact off' to turn it off for this session.");
}

async function autocompact(context: CommandContext, wanted: boolean | undefined, options: AutocompactOptions): Promise<AutocompactState> {
  const selection = sessionSelection(context, options.session);
  const path = await resolveTarget(selection, context.io);
  requirePiFormat(path, wanted === undefined ? "read the session's auto-compaction setting" : "set auto-compaction");
  if (wanted !== undefined) refuseOpenClawSnapshot(path, "set auto-compaction");
  const parsed = readTargetSession(path, selection, context.io);
  const own = sessionAutoCompact(buildContext(parsed.entries, { file: path }).branch);
  const compactor = await loadCompactor(context, { agent: options.agent });
  try {
    const config = configOf(compactor);
    const window = compactor.contextWindow ?? config.contextWindow;
    const configEnabled = compactor.autoCompact.enabled;
    const current = own ?? configEnabled;
    // Written even when it equals the config: the session then keeps it if the config changes.
    const changed = wanted !== undefined && own !== wanted;
    if (changed) {
      assertWholeBranch(path, selection);
      await upgradeBeforeWriting(path, parsed, context.io);
      await appendEntries(path, [autoCompactEntry(wanted)]);
    }
    return {
      session: { path, id: parsed.header.id },
      enabled: wanted ?? current,
      source: wanted === undefined && own === undefined ? "config" : "session",
      configEnabled,
      threshold: compactor.autoCompact.threshold,
      thresholdTokens: Math.floor(compactor.autoCompact.threshold * window),
      preset: config.preset,
      config: configSummary(config),
      changed,
    };
  } finally {
    compactor.dispose();
  }
}

function renderState(state: AutocompactState, requested: boolean, { out: c }: CommandContext): string {
  const onOff = state.enabled ? c.green("on") : c.yellow("off");
  const at = `at ${Math.round(state.threshold * 100)}% of the window (${formatTokens(state.thresholdTokens)} tokens), preset ${state.preset}`;
  const source =
    state.source === "session"
      ? `set for this session${state.configEnabled === state.enabled ? "" : ` (the config says ${state.configEnabled ? "on" : "off"})`}`
      : "from the config";
  const lead = state.changed ? `${c.green("Set:")} auto-compaction` : "Auto-compaction";
  const unchanged = requested && !state.changed ? c.dim(" (already set; nothing written)") : "";
  return `${lead} ${onOff} ${at}, ${source}${unchanged}.\n${c.dim(`Session ${state.session.id} (${state.session.path})`)}\n`;
}
