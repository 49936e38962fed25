/**
 * `compaction compare`: choose a preset on your own sessions. The session's whole history (a pi
 * session's current branch, compactions set aside; the main context of a Claude Code transcript
 * or a Codex rollout) is replayed through each preset as a host runs it (@compaction/replay: an
 * in-memory context manager, a threshold check and the request it sends at every model call of
 * the recording, usage figures set aside since they describe the original), at the window given.
 * Per preset: compactions, the largest request, what the requests cost with the provider's prompt
 * cache (cache misses, the share of input read from the cache, input billed at Anthropic's and
 * OpenAI's prices), and continuity: at cut points past the window, the share of the identifiers
 * the agent went on to use from memory that the request it was sent still held (`ContinuityProbe`).
 * Nothing is written.
 */
import type { AdapterName } from "@compaction/core";
import { ContinuityProbe, type ContinuityTotals, contextManagerPolicy, type ReplayResult, replaySession, withoutUsage } from "@compaction/replay";
import { entryMessage, SessionTree } from "@compaction/transcript";
import { countOption } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { chooseContextWindow, type ContextWindowSource } from "../context-window.js";
import { formatTokens } from "../output.js";
import { progressLine } from "../progress.js";
import type { TargetSession } from "../session-target.js";

/** The built-in presets, compared when `--presets` is left out. */
export const COMPARED_PRESETS: readonly string[] = Object.freeze(["safeguard", "layered", "sliding-window", "rolling"]);

interface CompareOptions extends CommonOptions {
  readonly presets?: string;
  readonly window?: string;
}

interface CompareInput {
  readonly presets: readonly string[];
  readonly window: number | undefined;
}

/** One preset's replay. */
export interface PresetComparison {
  readonly preset: string;
  readonly compactions: number;
  /** Requests that read less than half of the previous request from the cache (the first one too). */
  readonly cacheMisses: number;
  /** Share of all input tokens read from the cache. */
  readonly cacheHitShare: number;
  /** Input billed, in tokens at the provider's base input price (cached input at 0.1x; Anthropic's cache writes at 1.25x). */
  readonly billed: { readonly anthropic: number; readonly openai: number };
  /** Input tokens over every request, before cache pricing. */
  readonly inputTokens: number;
  readonly largestRequest: number;
  /**
   * Continuity: of the identifiers the agent used from memory after each cut point, the share the
   * request sent there held (`keptNext`), and of those only an older part of the history showed
   * (`longMemory`). Null when the session never outgrows the window (nothing to lose).
   */
  readonly keptNext: number | null;
  readonly longMemory: number | null;
  readonly ms: number;
}

/** Everything `compare` reports; `--json` prints it as is. */
export interface CompareReport {
  readonly session: { readonly path: string; readonly format: string };
  readonly messages: number;
  /** Model calls in the recording (one before each reply of the assistant). */
  readonly calls: number;
  readonly contextWindow: number;
  /** Where `contextWindow` came from: `--window`, the config (set there), the window the session records, or the default (see context-window.ts). */
  readonly contextWindowSource: ContextWindowSource;
  readonly reserveTokens: number;
  /** Cut points the continuity measure was taken at (model calls past the window), and what the agent needed there. */
  readonly continuity: { readonly cuts: number; readonly needed: number };
  readonly presets: readonly PresetComparison[];
  /** The preset that billed least at Anthropic's prices. */
  readonly cheapest: string | null;
}

/** `compaction compare`. */
export const compareCommand = defineCommand({
  name: "compare",
  description: "replay the session through presets as a host would and compare compactions, cache hits and cost (writes nothing)",
  session: true,
  agent: true,
  options: [
    ["--presets <names>", `presets to replay, comma-separated (default: ${COMPARED_PRESETS.join(",")})`],
    ["--window <tokens>", "the model's context window to replay at (default: the config's contextWindow when it sets one, else the window the session records, else 200,000)"],
  ],
  parse: ({ options }: CommandCall<[], CompareOptions>): CompareInput => {
    const presets = (options.presets ?? COMPARED_PRESETS.join(",")).split(",").map((name) => name.trim()).filter((name) => name !== "");
    if (presets.length === 0) throw new CliError(ExitCode.USAGE, "--presets names no preset.", "Pass e.g. --presets safeguard,rolling, or leave it out to compare the built-in ones.");
    return { presets: [...new Set(presets)], window: countOption(options.window, "--window", "Pass the model's context window in tokens, e.g. --window 128000.") };
  },
  run: compare,
  text: (report, { context }) => renderReport(report, context.out),
});

async function compare(scope: CommandScope<CompareOptions, CompareInput>): Promise<CompareReport> {
  const { context, input, session } = scope;
  const { messages, adapter, format, recordedWindow } = history(session);
  const recording = withoutUsage(messages);
  const base = await scope.compactor({ adapter });
  const window = chooseContextWindow(base, recordedWindow, context.io, input.window);
  const contextWindow = window.tokens;
  // A reserve the config set that this window cannot hold is an error naming its file and key.
  const reserveTokens = base.reserveFor(contextWindow);
  const tokensOf = (message: unknown): number => base.tokens.count(message);
  const factsOf = (message: unknown) => base.facts.of(message);
  // Cut points only where the history has outgrown the window: before that, nothing was dropped.
  const outgrows = recording.reduce((sum: number, message) => sum + tokensOf(message), 0) > contextWindow;
  const probe = outgrows ? ContinuityProbe.of(recording, { factsOf, tokensOf, window: contextWindow }) : null;
  const results: { preset: string; result: ReplayResult; continuity: ContinuityTotals | null }[] = [];
  for (const preset of input.presets) {
    // Built here (not per replay) so a preset that does not resolve fails before any replay runs.
    const compactor = await scope.compactor({ preset, adapter, announce: false });
    const progress = progressLine(context.io, `Replaying ${preset}`, recording.length, { minBytes: 1, describe: (done, total) => `${done} / ${total} messages` });
    try {
      const recorder = probe?.recorder();
      const result = await replaySession(recording, contextManagerPolicy(preset, async () => compactor, contextWindow, { ownsCompactor: false }), {
        tokensOf,
        factsOf,
        ...(recorder === undefined ? {} : { onCall: recorder.onCall }),
        onProgress: (done, total) => progress.onProgress?.({ bytesRead: done, totalBytes: total }),
      });
      results.push({ preset, result, continuity: recorder?.totals() ?? null });
    } finally {
      progress.done();
    }
  }
  const presets = results.map(({ preset, result, continuity }) => comparison(preset, result, continuity));
  const cheapest = [...presets].sort((a, b) => a.billed.anthropic - b.billed.anthropic)[0]?.preset ?? null;
  return {
    session: { path: session.path, format },
    messages: recording.length,
    calls: results[0]?.result.calls ?? 0,
    contextWindow,
    contextWindowSource: window.source,
    reserveTokens,
    continuity: { cuts: probe?.cuts.length ?? 0, needed: probe?.cuts.reduce((sum, cut) => sum + cut.needed.length, 0) ?? 0 },
    presets,
    cheapest,
  };
}

/**
 * The session's whole history: a pi session's current branch with every message its compactions
 * took out of the context (the replay compacts on its own), or an import's main context.
 */
function history(session: TargetSession): { messages: readonly unknown[]; adapter: AdapterName; format: string; recordedWindow: number | null } {
  const loaded = session.transcript();
  if (loaded.pi === null) return { messages: loaded.messages, adapter: loaded.adapter, format: loaded.format, recordedWindow: loaded.contextWindow };
  const branch = new SessionTree(session.entries().entries).branch();
  const messages = branch.filter((entry) => entry.type === "message" || entry.type === "custom_message").map((entry) => entryMessage(entry));
  return { messages: messages.filter((message) => message !== undefined), adapter: loaded.adapter, format: loaded.format, recordedWindow: loaded.contextWindow };
}

function comparison(preset: string, result: ReplayResult, continuity: ContinuityTotals | null): PresetComparison {
  const { cache } = result;
  return {
    preset,
    compactions: result.compactions,
    cacheMisses: cache.misses,
    cacheHitShare: cache.hitShare,
    billed: { anthropic: cache.billed["anthropic"] ?? 0, openai: cache.billed["openai"] ?? 0 },
    inputTokens: cache.inputTokens,
    largestRequest: cache.largestRequest,
    keptNext: continuity?.share ?? null,
    longMemory: continuity?.longMemoryShare ?? null,
    ms: Math.round(result.ms),
  };
}

type Colors = CommandScope<CompareOptions, CompareInput>["context"]["out"];

function renderReport(report: CompareReport, c: Colors): string {
  const header = ["preset", "compactions", "cache misses", "cache hits", "billed (Anthropic)", "billed (OpenAI)", "largest request", "kept next", "long memory"];
  const rows = report.presets.map((p) => [
    p.preset,
    String(p.compactions),
    String(p.cacheMisses),
    `${(p.cacheHitShare * 100).toFixed(1)}%`,
    millions(p.billed.anthropic),
    millions(p.billed.openai),
    `${formatTokens(p.largestRequest)}${p.largestRequest > report.contextWindow - report.reserveTokens ? " (over the budget)" : ""}`,
    percent(p.keptNext),
    percent(p.longMemory),
  ]);
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (row: readonly string[]) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  const lines = [
    `${c.bold("Session")}   ${report.session.path} (${report.session.format}: ${formatTokens(report.messages)} messages, ${formatTokens(report.calls)} model calls)`,
    `${c.bold("Window")}    ${formatTokens(report.contextWindow)} tokens${report.contextWindowSource === "session" ? " (as the session records it)" : ""}, ${formatTokens(report.reserveTokens)} reserved for the reply`,
    `${c.bold("Replayed")}  as a host runs it: every model call of the recording, usage figures set aside, our count`,
    "",
    c.bold(line(header)),
    ...rows.map(line),
    "",
    c.dim("Cache misses: requests that read less than half of the previous request from the provider's prompt cache (the first one too)."),
    c.dim("Billed: input tokens at the base input price, cached input at 0.1x (Anthropic also bills cache writes at 1.25x)."),
    c.dim(
      report.continuity.cuts === 0
        ? "Kept next: the session never outgrows the window, so no request left anything out."
        : `Kept next: at ${report.continuity.cuts} model calls past the window, the share of the ${report.continuity.needed} identifiers the agent went on to use from memory that the request still held; long memory: of those only an older part of the history showed.`,
    ),
  ];
  if (report.cheapest !== null) lines.push(`${c.bold("Cheapest")}  ${report.cheapest}`);
  return `${lines.join("\n")}\n`;
}

const percent = (share: number | null): string => (share === null ? "-" : `${(share * 100).toFixed(1)}%`);
const millions = (tokens: number): string => (tokens >= 1e6 ? `${(tokens / 1e6).toFixed(2)}M` : formatTokens(Math.round(tokens)));
