/**
 * `compaction compare`: choose a preset on your own sessions. The session's whole history (a pi
 * session's current branch, or a Claude Code transcript's whole conversation, the recording's own
 * compactions not applied and their summaries left out; a Codex rollout's context after its latest
 * compaction) is replayed through each preset as a host runs it (@compaction/replay: an
 * in-memory context manager, a threshold check and the request it sends at every model call of
 * the recording, usage figures set aside since they describe the original), at the window given.
 * Per preset: compactions, the largest request, what the requests cost with the provider's prompt
 * cache (cache misses, the share of input read from the cache, input billed at Anthropic's and
 * OpenAI's prices), and continuity: at cut points past the window, the share of the identifiers
 * the agent went on to use from memory that the request it was sent still held (`ContinuityProbe`).
 * Beside the presets: the compactions the recording made itself, where it records them. Nothing
 * is written.
 */
import type { AdapterName } from "@compaction/core";
import { ContinuityProbe, type ContinuityTotals, contextManagerPolicy, type ReplayResult, replaySession, withoutUsage } from "@compaction/replay";
import { type CompactionEntry, entryMessage, SessionTree, TRANSCRIPT_ADAPTERS } from "@compaction/transcript";
import { countOption } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { chooseContextWindow, type ContextWindowSource } from "../context-window.js";
import { configOf } from "../load-compactor.js";
import type { CliIo } from "../io.js";
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

/** A compaction the recording made itself (the replay does not apply it: each preset compacts on its own). */
export interface RecordedCompactionRow {
  /** Where it is: `line N` of a Claude Code transcript, or a pi entry id. */
  readonly at: string;
  /** `auto` or `manual` where the recording says. */
  readonly trigger: string | null;
  /** The context's size when it compacted, as the recording measured it (Claude Code's `preTokens`, pi's `tokensBefore`). */
  readonly tokensBefore: number | null;
}

/** What of the recording was replayed. */
export interface ReplayedHistory {
  /**
   * `whole`: every message the session recorded (a pi session's current branch), its own compactions
   * not applied and their summaries left out; `after-latest-compaction`: the context after its
   * latest compaction (a Codex rollout), that summary first.
   */
  readonly view: "whole" | "after-latest-compaction";
  /** The recording's own compactions that the replayed history passes through (none listed for `after-latest-compaction`). */
  readonly compactions: readonly RecordedCompactionRow[];
  /**
   * Where the history starts when the file does not hold all of it (a Claude Code transcript that
   * continues another file, or one read with --skip-corrupt past a compaction that does not join
   * what came before it): its summary is the first message replayed. Null when it starts at the start.
   */
  readonly startsAt: { readonly at: string; readonly reason: string } | null;
}

/** Everything `compare` reports; `--json` prints it as is. */
export interface CompareReport {
  readonly session: { readonly path: string; readonly format: string };
  readonly history: ReplayedHistory;
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
  description: "replay the session's whole history through presets as a host would and compare compactions, cache hits and cost (writes nothing)",
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
  const { messages, adapter, format, replayed, recordedWindow } = history(session, context.io);
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
    history: replayed,
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

interface History {
  readonly messages: readonly unknown[];
  readonly adapter: AdapterName;
  readonly format: string;
  readonly replayed: ReplayedHistory;
  /** The window the session records for its model (a Codex rollout's), or null. */
  readonly recordedWindow: number | null;
}

/**
 * The session's whole history (the replay compacts on its own): a pi session's current branch with
 * every message its compactions took out of the context, a Claude Code transcript's whole
 * conversation (importClaudeCodeHistory), or a Codex rollout's context after its latest compaction.
 */
function history(session: TargetSession, io: CliIo): History {
  if (session.format() === "claude-code") return claudeCodeHistory(session, io);
  const loaded = session.transcript();
  if (loaded.pi === null) {
    return {
      messages: loaded.messages,
      adapter: loaded.adapter,
      format: loaded.format,
      replayed: { view: (loaded.importedCompactions ?? 0) > 0 ? "after-latest-compaction" : "whole", compactions: [], startsAt: null },
      recordedWindow: loaded.contextWindow,
    };
  }
  const branch = new SessionTree(session.entries().entries).branch();
  const messages = branch.filter((entry) => entry.type === "message" || entry.type === "custom_message").map((entry) => entryMessage(entry));
  const compactions = branch.filter((entry): entry is CompactionEntry => entry.type === "compaction").map(piCompaction);
  return { messages: messages.filter((message) => message !== undefined), adapter: loaded.adapter, format: loaded.format, replayed: { view: "whole", compactions, startsAt: null }, recordedWindow: loaded.contextWindow };
}

function claudeCodeHistory(session: TargetSession, io: CliIo): History {
  const recorded = session.claudeCodeHistory();
  const startsAt = recorded.startsAt === null ? null : { at: `line ${recorded.startsAt.line}`, reason: recorded.startsAt.reason };
  if (recorded.startsAt?.leftOut === true) io.stderr.write(`compaction: warning: ${session.path}:${recorded.startsAt.line}: ${recorded.startsAt.reason}; the history is replayed from there.\n`);
  const compactions = recorded.compactions.map((compaction) => ({ at: `line ${compaction.line}`, trigger: compaction.trigger, tokensBefore: compaction.preTokens }));
  return { messages: recorded.messages, adapter: TRANSCRIPT_ADAPTERS["claude-code"], format: "claude-code", replayed: { view: "whole", compactions, startsAt }, recordedWindow: null };
}

function piCompaction(entry: CompactionEntry): RecordedCompactionRow {
  const trigger = (entry.details as { trigger?: unknown } | undefined)?.trigger;
  return { at: entry.id, trigger: typeof trigger === "string" ? trigger : null, tokensBefore: Number.isFinite(entry.tokensBefore) ? entry.tokensBefore : null };
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
    `${c.bold("History")}   ${describeHistory(report.history)}`,
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

/** What was replayed, and the recording's own compactions: beside the presets' figures, never applied. */
function describeHistory(history: ReplayedHistory): string {
  if (history.view === "after-latest-compaction") return "the context after the recording's latest compaction, its summary first (what came before it is not replayed)";
  const start = history.startsAt === null ? "the whole conversation" : `from ${history.startsAt.at} on (${history.startsAt.reason})`;
  const { compactions } = history;
  if (compactions.length === 0) return `${start}; the recording made no compaction of its own${history.startsAt === null ? "" : " after that"}`;
  const triggers = new Set(compactions.map((compaction) => compaction.trigger));
  const [trigger] = triggers;
  const shared = triggers.size === 1 && trigger !== null && trigger !== undefined ? `${trigger}, ` : "";
  const sizes = compactions.map((compaction) => {
    const size = compaction.tokensBefore === null ? "an unrecorded size" : formatTokens(compaction.tokensBefore);
    return shared === "" && compaction.trigger !== null ? `${compaction.trigger} at ${size}` : size;
  });
  const own = compactions.length === 1 ? "its own compaction" : `its own ${compactions.length} compactions`;
  return `${start}, through ${own} (${shared}at ${listed(sizes)} tokens by its count): not applied, ${compactions.length === 1 ? "its summary" : "their summaries"} left out`;
}

const listed = (items: readonly string[]): string => (items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);
const percent = (share: number | null): string => (share === null ? "-" : `${(share * 100).toFixed(1)}%`);
const millions = (tokens: number): string => (tokens >= 1e6 ? `${(tokens / 1e6).toFixed(2)}M` : formatTokens(Math.round(tokens)));
