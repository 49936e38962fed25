/**
 * `compaction compare`: choose a preset on your own sessions. The session's whole history (a pi
 * session's current branch, or a Claude Code transcript's whole conversation, the recording's own
 * compactions not applied and their summaries left out; a Codex rollout's context after its latest
 * compaction) is replayed through each preset as a host runs it (@compaction/replay: an
 * in-memory context manager, a threshold check and the request it sends at every model call of
 * the recording, usage figures set aside since they describe the original), at the window given.
 * Per preset: compactions, the largest request, what the requests cost with the provider's prompt
 * cache (cache misses, the share of input read from the cache, input billed at Anthropic's and
 * OpenAI's prices), and continuity: at model calls past the earliest threshold a preset compacts
 * at, the share of the identifiers the agent went on to use from memory that the request it was
 * sent still held (`ContinuityProbe`). Then a recommendation that weighs the two
 * (compare-recommendation.ts). Beside the presets: the compactions the recording made itself,
 * where it records them. The text fits 80 columns; `--json` has every figure. Nothing is written.
 */
import type { AdapterName, Compactor } from "@compaction/core";
import { ContinuityProbe, type ContinuityTotals, contextManagerPolicy, HeldSummarizer, type ReplayResult, replaySession, replayTimed, withoutUsage } from "@compaction/replay";
import { type CompactionEntry, entryMessage, SessionTree, TRANSCRIPT_ADAPTERS } from "@compaction/transcript";
import { isAbsolute, relative } from "node:path";
import { countOption } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { RECOMMENDATION_RULE, type Recommendation, recommend } from "../compare-recommendation.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { chooseContextWindow, type ContextWindowSource } from "../context-window.js";
import type { CliIo } from "../io.js";
import { formatTokens, plural } from "../output.js";
import { progressLine } from "../progress.js";
import type { TargetSession } from "../session-target.js";

/** The built-in presets, compared when `--presets` is left out. */
export const COMPARED_PRESETS: readonly string[] = Object.freeze(["safeguard", "layered", "sliding-window", "rolling"]);

/**
 * Model calls continuity is measured at (the replay's default is 6). A recommendation must not
 * hinge on which few calls were picked: on the shipped session at 64k, six cut points put
 * safeguard's continuity first and 24 or more put it last, while 24, 48 and 96 agree within a
 * point. Scoring a cut is a text search in the request sent there, so 48 cost little.
 */
export const COMPARE_CUT_POINTS = 48;

interface CompareOptions extends CommonOptions {
  readonly presets?: string;
  readonly window?: string;
  readonly summaryLatency?: string;
}

interface CompareInput {
  readonly presets: readonly string[];
  readonly window: number | undefined;
  /** `--summary-latency`, in seconds, or undefined. */
  readonly summaryLatency: number | undefined;
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
  /**
   * With `--summary-latency`: the session replayed on its own clock with every summarizer call
   * taking that long, as hosts compact today (`blocking`: the agent waits at the threshold) and
   * with background compaction (docs/background-compaction.md): compactions, seconds the agent
   * waited for them, and compactions it did not wait for at all. Absent without the option.
   */
  readonly latency?: {
    readonly seconds: number;
    readonly blocking: LatencyReplay;
    readonly background: LatencyReplay;
  };
}

/** One replay on the session's clock with a slow summarizer (`PresetComparison.latency`). */
export interface LatencyReplay {
  readonly compactions: number;
  readonly waitedSeconds: number;
  readonly noWait: number;
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
  /** Our token counter (`tiktoken:o200k_base` by default): every figure is in its tokens. */
  readonly counter: string;
  /**
   * Where continuity was measured: `cuts` model calls whose history before them is more than
   * `pastTokens` (the lowest auto-compaction threshold of the presets compared, at most the
   * budget: from there a preset may have left something out), what the agent needed there from
   * memory (`needed` identifiers, `longMemory` of them only older history showed).
   */
  readonly continuity: { readonly cuts: number; readonly needed: number; readonly longMemory: number; readonly pastTokens: number };
  readonly presets: readonly PresetComparison[];
  /** The preset that billed least at Anthropic's prices. */
  readonly cheapest: string | null;
  /** The preset to use and why, by the rule of compare-recommendation.ts (cost weighed against what the context keeps). */
  readonly recommended: Recommendation | null;
}

/** What `compare --help` adds after the options: the recommendation's rule. */
const COMPARE_HELP = `${wrap(RECOMMENDATION_RULE, 80).join("\n")}

Example, on the session a clone of the repository ships:
  compaction compare --window 64000 \\
    --session examples/sessions/pi-large-session.jsonl`;

/** `compaction compare`. */
export const compareCommand = defineCommand({
  name: "compare",
  description: "replay the session's whole history through presets as a host would, compare what each costs and keeps, and recommend one (writes nothing)",
  session: true,
  agent: true,
  options: [
    ["--presets <names>", `presets to replay, comma-separated (default: ${COMPARED_PRESETS.join(",")})`],
    ["--window <tokens>", "the model's context window to replay at (default: the config's contextWindow when it sets one, else the window the session records, else 200,000)"],
    ["--summary-latency <seconds>", "also replay the session on its own clock with every summary taking this long, blocking and in the background, and show how long the agent waited"],
  ],
  help: COMPARE_HELP,
  parse: ({ options }: CommandCall<[], CompareOptions>): CompareInput => {
    const presets = (options.presets ?? COMPARED_PRESETS.join(",")).split(",").map((name) => name.trim()).filter((name) => name !== "");
    if (presets.length === 0) throw new CliError(ExitCode.USAGE, "--presets names no preset.", "Pass e.g. --presets safeguard,rolling, or leave it out to compare the built-in ones.");
    return {
      presets: [...new Set(presets)],
      window: countOption(options.window, "--window", "Pass the model's context window in tokens, e.g. --window 128000."),
      summaryLatency: latencyOption(options.summaryLatency),
    };
  },
  run: compare,
  text: (report, { context }) => renderReport(report, context.out, context.io.cwd),
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
  // Every preset is built before any replay, so one that does not resolve fails before the replays' minutes.
  const compactors: { preset: string; compactor: Compactor<unknown> }[] = [];
  for (const preset of input.presets) compactors.push({ preset, compactor: await scope.compactor({ preset, presetNamedBy: "--presets", adapter, announce: false }) });
  // Below the lowest threshold no preset compacts and every request holds the whole history: cut
  // points start there. Past the window would miss a session that outgrows a preset's threshold
  // but not the window, and with it every compaction that preset made.
  const budget = contextWindow - reserveTokens;
  const pastTokens = Math.min(budget, ...compactors.map(({ compactor }) => (compactor.autoCompact.enabled ? compactor.autoCompactTokens(contextWindow, reserveTokens) : budget)));
  const outgrows = recording.reduce((sum: number, message) => sum + tokensOf(message), 0) > pastTokens;
  const probe = outgrows ? ContinuityProbe.of(recording, { factsOf, tokensOf, window: contextWindow, pastTokens, cutPoints: COMPARE_CUT_POINTS }) : null;
  const results: { preset: string; result: ReplayResult; continuity: ContinuityTotals | null }[] = [];
  for (const { preset, compactor } of compactors) {
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
  const latencies = new Map<string, NonNullable<PresetComparison["latency"]>>();
  if (input.summaryLatency !== undefined) {
    for (const { preset, compactor } of compactors) latencies.set(preset, await latencyReplays(recording, compactor, contextWindow, input.summaryLatency));
  }
  const presets = results.map(({ preset, result, continuity }) => {
    const latency = latencies.get(preset);
    return { ...comparison(preset, result, continuity), ...(latency === undefined ? {} : { latency }) };
  });
  const cheapest = [...presets].sort((a, b) => a.billed.anthropic - b.billed.anthropic)[0]?.preset ?? null;
  const cuts = probe?.cuts ?? [];
  return {
    session: { path: session.path, format },
    history: replayed,
    messages: recording.length,
    calls: results[0]?.result.calls ?? 0,
    contextWindow,
    contextWindowSource: window.source,
    reserveTokens,
    counter: base.tokens.counter.name,
    continuity: {
      cuts: cuts.length,
      needed: cuts.reduce((sum, cut) => sum + cut.needed.length, 0),
      longMemory: cuts.reduce((sum, cut) => sum + cut.longMemory.length, 0),
      pastTokens: Math.round(pastTokens),
    },
    presets,
    cheapest,
    recommended: recommend(presets),
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
  const format = session.format();
  if (format === "claude-code") return claudeCodeHistory(session, io);
  if (format === "pi") {
    // Every entry, read once: the boundary load as well would read the file twice and report each skipped line twice.
    const branch = new SessionTree(session.entries().entries).branch();
    const messages = branch.filter((entry) => entry.type === "message" || entry.type === "custom_message").map((entry) => entryMessage(entry));
    const compactions = branch.filter((entry): entry is CompactionEntry => entry.type === "compaction").map(piCompaction);
    return { messages: messages.filter((message) => message !== undefined), adapter: TRANSCRIPT_ADAPTERS.pi, format, replayed: { view: "whole", compactions, startsAt: null }, recordedWindow: null };
  }
  const loaded = session.transcript();
  return {
    messages: loaded.messages,
    adapter: loaded.adapter,
    format: loaded.format,
    replayed: { view: (loaded.importedCompactions ?? 0) > 0 ? "after-latest-compaction" : "whole", compactions: [], startsAt: null },
    recordedWindow: loaded.contextWindow,
  };
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

/** `--summary-latency`: seconds, a number of at least 0. */
function latencyOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (text.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
    throw new CliError(ExitCode.USAGE, `--summary-latency expects seconds (a number of at least 0); found '${text}'.`, "Pass how long one summary takes, e.g. --summary-latency 30.");
  }
  return seconds;
}

/**
 * The session on its own clock (its messages' timestamps) with every call of the preset's
 * summarizer held `seconds` of simulated time (`HeldSummarizer`), blocking and in the background.
 */
async function latencyReplays(recording: readonly unknown[], compactor: Compactor<unknown>, contextWindow: number, seconds: number): Promise<NonNullable<PresetComparison["latency"]>> {
  const facts = recording.map((message) => compactor.facts.of(message));
  const tokensOf = (message: unknown): number => compactor.tokens.count(message);
  const own = compactor.summarizer;
  const run = async (mode: "blocking" | "background"): Promise<LatencyReplay> => {
    const held = new HeldSummarizer(own);
    compactor.summarizer = held;
    try {
      const result = await replayTimed({ messages: recording, facts, tokensOf, probe: null, compactor, window: contextWindow, mode, latencyMs: seconds * 1000, server: held, cacheTtlMs: 300_000 });
      return { compactions: result.compactions, waitedSeconds: Math.round(result.waitedS), noWait: result.noWait };
    } finally {
      compactor.summarizer = own;
    }
  };
  return { seconds, blocking: await run("blocking"), background: await run("background") };
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

/** With --summary-latency: per preset, how long the agent waited for compactions, blocking and in the background. */
function latencyLines(report: CompareReport, c: Colors): string[] {
  const timed = report.presets.filter((p) => p.latency !== undefined);
  if (timed.length === 0) return [];
  const seconds = timed[0]?.latency?.seconds ?? 0;
  const wait = (r: LatencyReplay) => `${r.waitedSeconds} s over ${plural(r.compactions, "compaction")}${r.compactions === 0 ? "" : `, ${r.noWait} with no wait`}`;
  return [
    "",
    ...labelled(c, "Waiting", `with every summary taking ${seconds} s, on the session's own clock (its timestamps), the agent waited:`),
    ...timed.flatMap((p) => wrap(`${p.preset}: blocking ${wait(p.latency!.blocking)}; background ${wait(p.latency!.background)}`, WIDTH - 4).map((one, i) => (i === 0 ? `  ${one}` : `    ${one}`))),
  ];
}

/** The terminal width the text fits (the JSON keeps every figure). */
const WIDTH = 80;
/** Where the heading lines' values start (`Replayed  `). */
const LABEL = 10;

/** The table's columns: a two-line heading, the cell, and whether it is a figure (right-aligned). */
const COLUMNS: readonly { readonly head: readonly [string, string]; readonly cell: (p: PresetComparison, r: CompareReport) => string; readonly figure: boolean }[] = [
  { head: ["", "preset"], cell: (p) => p.preset, figure: false },
  { head: ["", "compactions"], cell: (p) => String(p.compactions), figure: true },
  { head: ["cache", "misses"], cell: (p) => String(p.cacheMisses), figure: true },
  { head: ["billed", "input"], cell: (p) => millions(p.billed.anthropic), figure: true },
  { head: ["largest", "request"], cell: (p, r) => `${formatTokens(p.largestRequest)}${overBudget(p, r) ? "*" : ""}`, figure: true },
  { head: ["kept", "next"], cell: (p) => percent(p.keptNext), figure: true },
  { head: ["long", "memory"], cell: (p) => percent(p.longMemory), figure: true },
];

function renderReport(report: CompareReport, c: Colors, cwd: string): string {
  const rows = report.presets.map((p) => COLUMNS.map((column) => column.cell(p, report)));
  const widths = COLUMNS.map((column, i) => Math.max(...column.head.map((head) => head.length), ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (COLUMNS[i]?.figure === true ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const budget = report.contextWindow - report.reserveTokens;
  const lines = [
    ...sessionLines(report, c, cwd),
    ...labelled(c, "Window", `${formatTokens(report.contextWindow)} tokens${report.contextWindowSource === "session" ? " (as the session records it)" : ""}, ${formatTokens(report.reserveTokens)} reserved for the reply`),
    ...labelled(c, "Replayed", `every model call of the session, with the request a host running each preset would send, counted by ${report.counter} (the session's own usage figures are for requests never compacted)`),
    ...labelled(c, "History", describeHistory(report.history)),
    "",
    c.bold(line(COLUMNS.map((column) => column.head[0]))),
    c.bold(line(COLUMNS.map((column) => column.head[1]))),
    ...rows.map(line),
    "",
    ...legend(c, "compactions", "times the preset compacted; each costs a cache miss and may lose detail"),
    ...legend(c, "cache misses", "requests the prompt cache could not mostly serve, billed at full price: the first, then about one per compaction"),
    ...legend(c, "billed input", "input tokens as billed with the prompt cache (reads at 0.1x, writes at 1.25x: Anthropic's prices; OpenAI's are in --json); less is cheaper"),
    ...legend(
      c,
      "largest request",
      `the largest one sent, of the ${formatTokens(budget)} tokens a request may hold (the window less the reply's reserve)${report.presets.some((p) => overBudget(p, report)) ? "; * more than that" : ""}`,
    ),
    ...continuityLegend(report, c),
    ...latencyLines(report, c),
    "",
    ...(report.recommended === null ? [] : labelled(c, "Recommended", `${report.recommended.preset}: ${report.recommended.why}`, 13)),
  ];
  return `${lines.join("\n")}\n`;
}

/** The session's path and what it holds: on one line where it fits, else the path first (broken after a `/` where it is longer than the line). */
function sessionLines(report: CompareReport, c: Colors, cwd: string): string[] {
  const path = shownPath(report.session.path, cwd);
  const holds = `(${report.session.format}: ${formatTokens(report.messages)} messages, ${formatTokens(report.calls)} model calls)`;
  if (LABEL + path.length + 1 + holds.length <= WIDTH) return labelled(c, "Session", `${path} ${holds}`);
  const [first = "", ...rest] = [...wrap(path.replaceAll("/", "/ "), WIDTH - LABEL).map((part) => part.replaceAll("/ ", "/")), holds];
  return [`${c.bold("Session".padEnd(LABEL))}${first}`, ...rest.map((more) => `${" ".repeat(LABEL)}${more}`)];
}

/** What the two continuity columns mean here, or why they show `-`. */
function continuityLegend(report: CompareReport, c: Colors): string[] {
  const { continuity } = report;
  if (continuity.cuts === 0) {
    const why = report.presets.every((p) => p.compactions === 0)
      ? `no preset compacted: the session never grows past ${formatTokens(continuity.pastTokens)} tokens, the earliest a preset compacts, so every request held all of it`
      : `past ${formatTokens(continuity.pastTokens)} tokens, the earliest a preset compacts, the agent used nothing from memory it was not shown again`;
    return legend(c, "kept next, long memory", `not measured (-): ${why}`);
  }
  const at = `at ${plural(continuity.cuts, "model call")} past ${formatTokens(continuity.pastTokens)} tokens (the earliest a preset compacts)`;
  return [
    ...legend(c, "kept next", `${at}, the share of the ${formatTokens(continuity.needed)} names the agent went on to use from memory (files, functions, commands) that the request still held; lower, the agent more often loses the thread`),
    ...legend(c, "long memory", `the same, for the ${formatTokens(continuity.longMemory)} of them only older history showed: what a summary must keep`),
  ];
}

/** `label` in bold and `text` after it, wrapped to the width with the continuation under the text. */
function labelled(c: Colors, label: string, text: string, indent = LABEL): string[] {
  const [first = "", ...rest] = wrap(text, WIDTH - indent);
  return [`${c.bold(label.padEnd(indent))}${first}`, ...rest.map((more) => `${" ".repeat(indent)}${more}`)];
}

/** One column's meaning: its name, then the text wrapped under a small indent. */
function legend(c: Colors, name: string, text: string): string[] {
  return wrap(`${name}: ${text}.`, WIDTH - 2).map((one, i) => c.dim(i === 0 ? one : `  ${one}`));
}

/** `text` in lines of at most `width` characters, broken at spaces (a word longer than the width stands alone). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = "";
  for (const word of text.split(" ")) {
    if (current !== "" && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else current = current === "" ? word : `${current} ${word}`;
  }
  lines.push(current);
  return lines;
}

/** The session's path as the user would type it: relative to the working directory when under it. */
function shownPath(path: string, cwd: string): string {
  const under = relative(cwd, path);
  return under !== "" && !under.startsWith("..") && !isAbsolute(under) ? under : path;
}

const overBudget = (p: PresetComparison, report: CompareReport): boolean => p.largestRequest > report.contextWindow - report.reserveTokens;

/** What was replayed, and the recording's own compactions: beside the presets' figures, never applied. */
function describeHistory(history: ReplayedHistory): string {
  if (history.view === "after-latest-compaction") return "the context after the session's latest compaction, its summary first (what came before it is not replayed)";
  const start = history.startsAt === null ? "the whole conversation" : `from ${history.startsAt.at} on (${history.startsAt.reason})`;
  const { compactions } = history;
  if (compactions.length === 0) return `${start}; the session made no compaction of its own${history.startsAt === null ? "" : " after that"}`;
  const triggers = new Set(compactions.map((compaction) => compaction.trigger));
  const [trigger] = triggers;
  const shared = triggers.size === 1 && trigger !== null && trigger !== undefined ? `${trigger}, ` : "";
  const sizes = compactions.map((compaction) => {
    const size = compaction.tokensBefore === null ? "an unrecorded size" : formatTokens(compaction.tokensBefore);
    return shared === "" && compaction.trigger !== null ? `${compaction.trigger} at ${size}` : size;
  });
  const own = compactions.length === 1 ? "its own compaction" : `its own ${compactions.length} compactions`;
  return `${start}, through ${own} (${shared}at ${listed(sizes)} tokens by its count): not applied, since each preset compacts on its own, and ${compactions.length === 1 ? "its summary" : "their summaries"} left out`;
}

const listed = (items: readonly string[]): string => (items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);
const percent = (share: number | null): string => (share === null ? "-" : `${(share * 100).toFixed(1)}%`);
const millions = (tokens: number): string => (tokens >= 1e6 ? `${(tokens / 1e6).toFixed(2)}M` : formatTokens(Math.round(tokens)));
