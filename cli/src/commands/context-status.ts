/** `compaction context status`: how full the context is, auto-compaction, and the compaction history. */
import { buildContext } from "@compaction/core";
import type { Command } from "commander";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { compactionHistory, degradationRisk, riskAdvice, type DegradationRisk } from "../compaction-history.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { configOf, loadCompactor } from "../load-compactor.js";
import { formatAge, formatTokens, percentUsed, usageBar } from "../output.js";
import { readTargetSession, resolveTarget } from "../session-target.js";

interface StatusOptions {
  readonly session?: string;
  readonly agent?: string;
  readonly json?: boolean;
}

/** Everything `context status` reports; `--json` prints it as is. */
export interface ContextStatus {
  readonly session: { readonly path: string; readonly id: string };
  readonly agent: string | null;
  readonly preset: string;
  readonly messages: number;
  readonly tokens: number;
  readonly contextWindow: number;
  readonly percent: number;
  readonly autoCompact: { readonly enabled: boolean; readonly threshold: number; readonly thresholdTokens: number };
  readonly compactions: { readonly count: number; readonly lastAt: string | null; readonly sinceLastMs: number | null };
  readonly risk: DegradationRisk;
  readonly advice: string | null;
}

/** Adds `status` to the `context` command group. */
export function registerContextStatus(group: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  group
    .command("status")
    .description("show how full the session's context is, auto-compaction, and how often it was compacted")
    .option(...SESSION_OPTION)
    .option(...AGENT_OPTION)
    .option("--json", "print one JSON object instead of text")
    .action(async (options: StatusOptions, command: Command) => {
      const context = commandContext(command, io);
      const status = await contextStatus(context, options);
      io.stdout.write(options.json === true ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status, context));
      done(ExitCode.OK);
    });
}

async function contextStatus(context: CommandContext, options: StatusOptions): Promise<ContextStatus> {
  const selection = sessionSelection(context, options.session);
  const path = await resolveTarget(selection, context.io);
  const parsed = readTargetSession(path, selection, context.io);
  const session = buildContext(parsed.entries, { file: path });
  const compactor = await loadCompactor(context.io.cwd, options.agent);
  try {
    const config = configOf(compactor);
    const window = compactor.contextWindow ?? config.contextWindow;
    const tokens = compactor.tokens.contextTokens(session.messages).tokens;
    const history = compactionHistory(session.branch);
    const lastAt = history.last?.timestamp ?? null;
    const lastMs = lastAt === null ? Number.NaN : Date.parse(lastAt);
    const risk = degradationRisk(history.count);
    return {
      session: { path, id: parsed.header.id },
      agent: config.agent,
      preset: config.preset,
      messages: session.messages.length,
      tokens,
      contextWindow: window,
      percent: percentUsed(tokens, window),
      autoCompact: {
        enabled: compactor.autoCompact.enabled,
        threshold: compactor.autoCompact.threshold,
        thresholdTokens: Math.floor(compactor.autoCompact.threshold * window),
      },
      compactions: { count: history.count, lastAt, sinceLastMs: Number.isNaN(lastMs) ? null : Math.max(0, Date.now() - lastMs) },
      risk,
      advice: riskAdvice(risk),
    };
  } finally {
    compactor.dispose();
  }
}

function renderStatus(status: ContextStatus, { out: c }: CommandContext): string {
  const auto = status.autoCompact;
  const autoText = auto.enabled
    ? `${c.green("on")} at ${Math.round(auto.threshold * 100)}% (${formatTokens(auto.thresholdTokens)} tokens)`
    : `${c.yellow("off")} (threshold ${Math.round(auto.threshold * 100)}%)`;
  const since = status.compactions.sinceLastMs === null ? "" : `, last ${formatAge(status.compactions.sinceLastMs)}`;
  const riskColor = status.risk === "high" ? c.red : status.risk === "medium" ? c.yellow : c.green;
  const lines = [
    `${c.bold("Session")}          ${status.session.id} ${c.dim(`(${status.session.path})`)}`,
    usageBar(status.tokens, status.contextWindow, c),
    `${c.bold("Auto-compaction")}  ${autoText}, preset ${status.preset}${status.agent === null ? "" : `, agent ${status.agent}`}`,
    `${c.bold("Compactions")}      ${status.compactions.count}${since}`,
    `${c.bold("Degradation risk")} ${riskColor(status.risk)}`,
  ];
  if (status.advice !== null) lines.push(`  ${status.advice}`);
  return `${lines.join("\n")}\n`;
}
