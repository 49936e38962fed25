/** `compaction context status`: how full the context is, auto-compaction, the compaction history, and the compaction being prepared in the background. */
import { type AdapterName, type ContextAnchor, usableWindow } from "@compaction/core";
import { buildContext, compactionAnchor, sessionAutoCompact, type TranscriptFormat } from "@compaction/transcript";
import { backgroundLine, type BackgroundStatus, backgroundStatus } from "../background-status.js";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { compactionHistory, degradationRisk, riskAdvice, type DegradationRisk } from "../compaction-history.js";
import { chooseContextWindow, type ContextWindowSource, parseWindow, recordedWindowNote, windowOption } from "../context-window.js";
import { configOf, configSummary, type ConfigSummary } from "../load-compactor.js";
import { describeMeasure, formatAge, formatTokens, percentUsed, sessionLabel, tokenMeasure, type TokenMeasure, usageBar, usableWindowNote } from "../output.js";
import { spellCommands } from "../program-name.js";
import type { TargetSession } from "../session-target.js";

/** Everything `context status` reports; `--json` prints it as is. */
export interface ContextStatus {
  readonly session: { readonly path: string; readonly id: string | null; readonly format: TranscriptFormat };
  readonly agent: string | null;
  /** Which configuration applied: the file, the agent's section, what the project may not run. */
  readonly config: ConfigSummary;
  readonly preset: string;
  readonly messages: number;
  /**
   * The context as the provider will count it (see `measure`): its newest usage figure, or the
   * newest compaction's recorded After when no usage figure is newer, plus the calibrated count
   * of the messages after it.
   */
  readonly tokens: number;
  readonly measure: TokenMeasure;
  readonly contextWindow: number;
  /** Where `contextWindow` came from: `--window`, the config (set there), the window the session records, or the default (see context-window.ts). */
  readonly contextWindowSource: ContextWindowSource;
  readonly percent: number;
  readonly autoCompact: {
    readonly enabled: boolean;
    /** `session`: set for this session with `compaction autocompact on|off`; `config`: from the config (or its default). */
    readonly source: "session" | "config";
    readonly threshold: number;
    /** The threshold in tokens: its share of the usable window (core's `autoCompactTokens`). */
    readonly thresholdTokens: number;
    /** The window the threshold is a share of: the context window, or less when the reserve for the reply takes over a tenth of it. */
    readonly usableWindow: number;
    /** The context is at or past `thresholdTokens` (whether or not auto-compaction is on): a host that compacts on its own does so before its next request. */
    readonly pastThreshold: boolean;
  };
  readonly compactions: { readonly count: number; readonly lastAt: string | null; readonly sinceLastMs: number | null };
  readonly risk: DegradationRisk;
  readonly advice: string | null;
  /**
   * The compaction being prepared in the background, where the session's store records it: a
   * session in SQLite or Postgres, whose workers claim it in the database (`recorded`; a pi file's
   * lives in the memory of the host preparing it), with who prepares it, since when and its state.
   */
  readonly background: BackgroundStatus;
}

interface StatusOptions extends CommonOptions {
  readonly window?: string;
}

interface StatusInput {
  readonly window: number | undefined;
}

/** `compaction context status`. */
export const contextStatusCommand = defineCommand({
  name: "status",
  description: "show how full the session's context is, auto-compaction, how often it was compacted, and a compaction being prepared in the background",
  session: true,
  agent: true,
  options: [windowOption("measure the context against")],
  parse: ({ options }: CommandCall<[], StatusOptions>): StatusInput => ({ window: parseWindow(options.window) }),
  run: contextStatus,
  text: (status, { context }) => renderStatus(status, context),
});

/** What the transcript says about the context and its compactions, whatever wrote it. */
interface SessionFacts {
  readonly id: string | null;
  readonly format: TranscriptFormat;
  readonly messages: readonly unknown[];
  readonly adapter: AdapterName;
  readonly compactions: number;
  readonly lastAt: string | null;
  /** The session's own auto-compaction setting, if it has one. */
  readonly autoCompact: boolean | undefined;
  /** The After the branch's newest compaction recorded, and the messages it covers (pi sessions; see compactionAnchor). */
  readonly anchor: ContextAnchor | undefined;
  /** The model's window the transcript records (Codex), or null. */
  readonly contextWindow: number | null;
}

function sessionFacts(session: TargetSession): SessionFacts {
  if (session.format() !== "pi") {
    const transcript = session.transcript();
    // Imports: the compactions the import applied; when they happened is not recorded.
    return {
      id: transcript.sessionId,
      format: transcript.format,
      messages: transcript.messages,
      adapter: transcript.adapter,
      compactions: transcript.importedCompactions ?? 0,
      lastAt: null,
      autoCompact: undefined,
      anchor: undefined,
      contextWindow: transcript.contextWindow,
    };
  }
  // pi: the whole file, for the compaction history and the session's settings on the branch.
  const parsed = session.entries();
  const context = buildContext(parsed.entries, { file: session.path });
  const { branch, messages } = context;
  const history = compactionHistory(branch);
  return {
    id: parsed.header.id,
    format: "pi",
    messages,
    adapter: "pi",
    compactions: history.count,
    lastAt: history.last?.timestamp ?? null,
    autoCompact: sessionAutoCompact(branch),
    anchor: compactionAnchor(context),
    contextWindow: null,
  };
}

/** How full the context is, by the config's window and the provider's measure. */
async function contextStatus(scope: CommandScope<StatusOptions, StatusInput>): Promise<ContextStatus> {
  const path = scope.session.shown;
  const facts = sessionFacts(scope.session);
  const compactor = await scope.compactor({ adapter: facts.adapter });
  const config = configOf(compactor);
  const chosen = chooseContextWindow(compactor, facts.contextWindow, scope.context.io, scope.input.window);
  const window = chosen.tokens;
  // Right after a compaction no message has a usage figure newer than it: its recorded After is
  // the size, as `compact` printed it, plus the calibrated count of what was appended since.
  // When the base figure covers every message it is the size: nothing is counted or calibrated,
  // so the encoder does not start.
  const base = compactor.tokens.contextBase(facts.messages, facts.anchor);
  const covered = base.base !== "count" && base.lastUsageIndex === facts.messages.length - 1;
  const size = covered ? undefined : compactor.tokens.contextTokens(facts.messages, facts.anchor);
  const tokens = size?.tokens ?? base.usageTokens;
  const lastMs = facts.lastAt === null ? Number.NaN : Date.parse(facts.lastAt);
  const risk = degradationRisk(facts.compactions);
  // The context manager's advice names commands (`compaction context export`): as the user runs the CLI.
  const advice = riskAdvice(risk);
  const thresholdTokens = compactor.autoCompactTokens(window);
  const background = await backgroundStatus(scope.session.database);
  return {
    session: { path, id: facts.id, format: facts.format },
    agent: config.agent,
    config: configSummary(config),
    preset: config.preset,
    messages: facts.messages.length,
    tokens,
    measure: tokenMeasure(compactor.tokens.counter.name, size ?? base, facts.messages.length),
    contextWindow: window,
    contextWindowSource: chosen.source,
    percent: percentUsed(tokens, window),
    autoCompact: {
      enabled: facts.autoCompact ?? compactor.autoCompact.enabled,
      source: facts.autoCompact === undefined ? "config" : "session",
      threshold: compactor.autoCompact.threshold,
      thresholdTokens,
      usableWindow: Math.floor(usableWindow(window, compactor.reserveFor(window))),
      pastThreshold: tokens >= thresholdTokens,
    },
    compactions: { count: facts.compactions, lastAt: facts.lastAt, sinceLastMs: Number.isNaN(lastMs) ? null : Math.max(0, Date.now() - lastMs) },
    risk,
    advice: advice === null ? null : spellCommands(advice, scope.context.program),
    background,
  };
}

function renderStatus(status: ContextStatus, { out: c, program }: CommandContext): string {
  const auto = status.autoCompact;
  const autoText = auto.enabled
    ? `${c.green("on")} at ${Math.round(auto.threshold * 100)}% (${formatTokens(auto.thresholdTokens)} tokens${usableWindowNote(auto.usableWindow, status.contextWindow)})`
    : `${c.yellow("off")} (threshold ${Math.round(auto.threshold * 100)}%)`;
  const since = status.compactions.sinceLastMs === null ? "" : `, last ${formatAge(status.compactions.sinceLastMs)}`;
  // An import's compactions are the recording's own: what is counted is the context after the
  // latest, as its agent would send it now (compare replays the whole history instead).
  const view = status.session.format !== "pi" && status.compactions.count > 0 ? ", the context counted is what follows the latest" : "";
  const riskColor = status.risk === "high" ? c.red : status.risk === "medium" ? c.yellow : c.green;
  const source = auto.source === "session" ? ", set for this session" : "";
  // Past the threshold, say what follows from it: with auto-compaction on, the host compacts
  // before it sends the next request; with it off, nothing does until someone compacts.
  const past = !auto.pastThreshold ? "" : `; ${c.yellow("past it")}: ${auto.enabled ? "the host compacts before its next request" : `compact by hand (${program} compact)`}`;
  const lines = [
    `${c.bold("Session")}          ${sessionLabel(status.session)} ${c.dim(`(${status.session.path})`)}`,
    usageBar(status.tokens, status.contextWindow, c),
  ];
  const recorded = recordedWindowNote({ tokens: status.contextWindow, source: status.contextWindowSource });
  if (recorded !== null) lines.push(`${c.bold("Window")}           ${c.dim(recorded)}`);
  lines.push(
    `${c.bold("Measure")}          ${c.dim(describeMeasure(status.measure))}`,
    `${c.bold("Auto-compaction")}  ${autoText}${source}, preset ${status.preset}${status.agent === null ? "" : `, agent ${status.agent}`}${past}`,
    `${c.bold("Compactions")}      ${status.compactions.count}${since}${view}`,
    `${c.bold("Degradation risk")} ${riskColor(status.risk)}`,
  );
  if (status.advice !== null) lines.push(`  ${status.advice}`);
  const background = backgroundLine(status.background, c);
  if (background !== null) lines.push(`${c.bold("Background")}       ${background}`);
  return `${lines.join("\n")}\n`;
}
