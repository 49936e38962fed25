/**
 * `compaction compact`: compacts the session's context now and writes pi's `compaction` entry
 * (after showing what it would do and asking; `--dry-run` writes nothing).
 */
import {
  appendPiCompaction,
  type BoundaryLoad,
  compactionAnchor,
  compactPiBranch,
  type PiCompaction,
  type PiCompactionPlan,
  type SetAsideTail,
  type TranscriptFormat,
} from "@compaction/transcript";
import { type CompactionResult, type Compactor, providerRatio, warningsMeasureNote } from "@compaction/core";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { confirm } from "../confirm.js";
import { CliError, errorSource, type ErrorSource } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { chooseContextWindow, type ContextWindowChoice, type ContextWindowSource, parseWindow, recordedWindowNote, windowOption } from "../context-window.js";
import { configOf, configSummary, type ConfigSummary } from "../load-compactor.js";
import { describeAfterMeasure, describeMeasure, formatTokens, plural, sessionLabel, tokenMeasure, type TokenMeasure } from "../output.js";
import { writeDatabaseCompaction } from "../database-target.js";
import { requirePiSession, type TranscriptContext } from "../session-target.js";
import { checkRecallTool, type RecallToolCheck, withoutRecall } from "../recall-tool.js";
import { upgradeBeforeWriting, upgradeDryRun, upgradeDryRunNote, type UpgradeReport } from "./session-upgrade.js";

interface CompactOptions extends CommonOptions {
  readonly preset?: string;
  readonly focus?: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
  readonly json?: boolean;
  readonly window?: string;
}

interface CompactInput {
  readonly window: number | undefined;
}

/** What `compact --json` prints: the plan, and whether (and as which entry) it was written. */
export interface CompactReport {
  readonly session: { readonly path: string; readonly id: string | null; readonly format: TranscriptFormat };
  /** Which configuration applied: the file, the agent's section, what the project may not run. */
  readonly config: ConfigSummary;
  readonly dryRun: boolean;
  readonly status: CompactionResult<unknown>["status"];
  /** Why nothing was (or would be) compacted or written; null when it was. */
  readonly reason: string | null;
  /**
   * The error behind a compaction that failed or was cancelled (a plugin that threw: its code
   * COMPACTION_PLUGIN_FAILED, the plugin, the hook, and what it threw with its stack); else null.
   */
  readonly error: ({ readonly code: string; readonly message: string } & ErrorSource) | null;
  readonly written: boolean;
  /** The compaction entry written, or null. */
  readonly entryId: string | null;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The window the compaction ran at, and where it came from (`--window`, the config, the session, the default; see context-window.ts). */
  readonly contextWindow: number;
  readonly contextWindowSource: ContextWindowSource;
  /**
   * False when the run compacted and its tokensAfter is over contextWindow: the compacted context
   * would still not fit the window (a dry run then exits 1; a write still writes, with a
   * warning). True otherwise, also when nothing was compacted.
   */
  readonly fitsWindow: boolean;
  /**
   * Half a line a crashed writer left at the end of the file, moved to `<file>.incomplete`
   * before the entry was appended (it was never a whole entry; the session loads without it); else null.
   */
  readonly setAside: SetAsideTail | null;
  /**
   * The measure of tokensBefore and tokensAfter: both the provider's (Before its usage figure, or
   * the last compaction's recorded After when no usage figure is newer, plus the calibrated count
   * of what followed; After our count of the compacted messages at Before's ratio to our count of
   * the messages before; see describeMeasure).
   */
  readonly measure: TokenMeasure;
  /**
   * The ratio After is at: tokensBefore over our count of the messages before (at least 1), by
   * which our count of the messages after is scaled (see describeAfterMeasure).
   */
  readonly afterRatio: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly messagesCompacted: number;
  readonly strategy: string | null;
  readonly layer: string | null;
  /** The first entry kept verbatim after the summary. */
  readonly firstKeptEntryId: string | null;
  readonly splitTurn: boolean;
  readonly focus: string | null;
  readonly warnings: readonly string[];
  readonly summary: string | null;
  /**
   * A version 1 or 2 file is rewritten as version 3 before the entry is appended (as pi does
   * when it opens it), keeping the original: what was done (with --dry-run: what would be, with
   * `upgraded` false), or null for a version 3 file or an imported transcript.
   */
  readonly upgrade: UpgradeReport | null;
  /**
   * When the compaction would tell the agent to use a recall tool (rolling with recall): where
   * the tool comes from, and whether rolling's no-recall fallback ran instead because nothing
   * gives it to the agent. Null otherwise.
   */
  readonly recallTool: RecallToolReport | null;
}

/** See CompactReport.recallTool. */
export interface RecallToolReport extends RecallToolCheck {
  /** Nothing gives the agent the tool: recall was left out, so rolling summarised instead of evicting. */
  readonly fallback: boolean;
}

/** `compaction compact`. */
export const compactCommand = defineCommand({
  name: "compact",
  description: "compact the session's context now and write the compaction entry pi reads",
  session: true,
  agent: true,
  options: [
    ["-p, --preset <name>", "run this preset instead of the configured one (e.g. rolling, layered)"],
    ["-f, --focus <instruction>", "what the summary should focus on"],
    ["-n, --dry-run", "show what would be compacted; write nothing"],
    ["-y, --yes", "write without asking (needed when stdin is not a terminal)"],
    windowOption("compact for"),
  ],
  jsonHelp: "print one JSON object (the plan, and what was written) instead of text",
  parse: ({ options }: CommandCall<[], CompactOptions>): CompactInput => ({ window: parseWindow(options.window) }),
  run: compact,
  // The plan was shown before asking (`say`): what is left is what happened.
  text: (report, { context }) => renderOutcome(report, context),
  // Declined at the prompt, or a dry run whose After would not fit the window: exit 1 (the refusals throw).
  exitCode: (report) => (report.written || (report.dryRun && report.fitsWindow) ? ExitCode.OK : ExitCode.FAILED),
});

/** What happened, after the plan: written (and a half line set aside), or the dry run's verdict. */
function renderOutcome(report: CompactReport, { out: c }: CommandContext): string {
  if (report.written) {
    const aside =
      report.setAside === null
        ? ""
        : `${c.yellow("Set aside")} the incomplete last line (${plural(report.setAside.bytes, "byte")}, a write cut short, never a whole entry) in ${report.setAside.path}; the session loads without it.\n`;
    return `${aside}${c.green("Compacted:")} wrote compaction entry ${report.entryId}.\n`;
  }
  if (!report.dryRun) return "";
  if (!report.fitsWindow) return `${c.red(`Dry run: nothing written; After would not fit the ${formatTokens(report.contextWindow)}-token window.`)}\n`;
  return `${c.dim("Dry run: nothing written.")}\n`;
}

/** Compacts, shows the plan, asks, writes pi's entry: the report of what was (or would be) written. */
async function compact(scope: CommandScope<CompactOptions, CompactInput>): Promise<CompactReport> {
  const { context, options, session } = scope;
  const { io } = context;
  const { path } = session;
  // A database session is read from its snapshot; what the user sees names the database.
  const transcript = { ...session.transcript(), path: session.shown };
  const writing = options.dryRun !== true;
  const pi = writing ? requirePiSession(transcript, "write a compaction") : transcript.pi;

  const loaded = await scope.compactor({ preset: options.preset, adapter: transcript.adapter });
  const applied = configSummary(configOf(loaded));
  const recall = transcript.pi === null ? null : recallToolChoice(loaded, transcript.cwd ?? io.cwd, context);
  const compactor = recall?.fallback === true ? withoutRecall(loaded, recall.tool) : loaded;
  if (compactor !== loaded) scope.disposeWhenDone(compactor);
  const window = chooseContextWindow(compactor, transcript.contextWindow, io, scope.input.window);
  // Before in the measure `context status` shows: with no usage figure since the branch's last
  // compaction, that compaction's recorded After plus the calibrated count of what followed.
  const anchor = transcript.pi === null ? undefined : compactionAnchor(transcript.pi);
  const measure = tokenMeasure(compactor.tokens.counter.name, compactor.tokens.contextTokens(transcript.messages, anchor), transcript.messages.length);
  // pi's compaction entry records a summary and an unchanged suffix: plugins must not count on
  // more. The dry run asks the same, so it shows what would be written.
  const compaction = await compactPiBranch(compactor, transcript, {
    trigger: "manual",
    contextWindow: window.tokens,
    ...(anchor === undefined ? {} : { anchor }),
    ...(options.focus === undefined ? {} : { focus: options.focus }),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
  });
  // Before is the provider's figure (system prompt and tools included): After in the same measure,
  // the figure the compaction's event records (and `context history` shows); a run that wrote
  // nothing has no event, and its output converted the same way.
  const tokensAfter =
    compaction.result.event?.tokensAfterCompaction ?? compactor.tokens.providerTokensAfter(transcript.messages, compaction.result.messages, anchor);
  const { result } = compaction;
  for (const warning of result.warnings) io.stderr.write(`${context.err.yellow("warning:")} ${warning}\n`);
  const countedBefore = compactor.tokens.total(transcript.messages);
  const afterRatio = providerRatio(result.tokensBefore, countedBefore);
  const note = warningsMeasureNote(result.warnings, compactor.tokens.counter.name, afterRatio);
  if (note !== null) io.stderr.write(`${context.err.dim("note:")} ${note} Before and After are in the provider's measure (see Measure).\n`);
  const fitsWindow = result.status !== "compacted" || tokensAfter <= window.tokens;

  const plan = planOf(compaction.plan, result);
  const report = (fields: Partial<CompactReport> = {}): CompactReport => ({
    ...reportOf(transcript, result, plan, options, applied, measure, afterRatio),
    tokensAfter,
    contextWindow: window.tokens,
    contextWindowSource: window.source,
    fitsWindow,
    recallTool: recall,
    ...fields,
  });
  if (plan.refusal !== null) {
    scope.say(renderBefore(session.shown, transcript.messages.length, result.tokensBefore, measure, window, context));
    return scope.fail(plan.refusal, report({ reason: plan.refusal.message }));
  }
  // An old file is upgraded before the entry is written: say so before asking or writing.
  const upgradeNeeded = pi === null || session.database !== undefined ? null : upgradeDryRun(path, pi.version);
  scope.say(renderPlan(transcript, result, plan.firstKeptEntryId as string, tokensAfter, measure, countedBefore, window, context));
  if (!fitsWindow) {
    io.stderr.write(
      `${context.err.yellow("warning:")} After (${formatTokens(tokensAfter)} tokens) is over the context window (${formatTokens(window.tokens)} tokens): the compacted context does not fit it, so a host must shrink or leave out messages in every request until the next compaction. Check that the window is the model's (--window, or contextWindow in the config).\n`,
    );
  }
  if (upgradeNeeded !== null) scope.say(`${context.out.bold("Upgrade")}   ${upgradeDryRunNote(upgradeNeeded)}\n`);
  if (!writing) return report({ upgrade: upgradeNeeded });
  if (options.yes !== true) {
    if (io.stdin.isTTY !== true) {
      const refusal = new CliError(
        ExitCode.FAILED,
        "Not writing the compaction: stdin is not a terminal, so it cannot ask for confirmation. Nothing was written.",
        "Pass --yes to write without asking, or --dry-run to only look.",
      );
      return scope.fail(refusal, report({ reason: refusal.message }));
    }
    if (!(await confirm(io, `Write the compaction entry to ${session.shown}?`))) {
      io.stderr.write("Declined: nothing written.\n");
      return report({ reason: "Declined at the prompt." });
    }
  }
  session.assertWholeBranch();
  const database = session.database;
  if (database !== undefined) {
    // To the database itself, only if nobody compacted the session since it was read.
    const entry = await writeDatabaseCompaction(database, plan.compaction as PiCompaction);
    return report({ written: true, entryId: entry.id, upgrade: null });
  }
  // The upgrade keeps every entry's id (version 1 entries get the ids the reader gave them), so
  // the plan made from the original still names the right entries.
  const upgrade = await upgradeBeforeWriting(path, pi as BoundaryLoad, io);
  let setAside: SetAsideTail | null = null;
  const entry = await appendPiCompaction(path, plan.compaction as PiCompaction, { onSetAside: (aside) => (setAside = aside) });
  return report({ written: true, entryId: entry.id, upgrade, setAside });
}

interface Plan {
  /** Why this result cannot be written (or was not compacted at all); null when it can. */
  readonly refusal: CliError | null;
  /** pi's entry to write, when it can be. */
  readonly compaction: PiCompaction | null;
  readonly firstKeptEntryId: string | null;
}

/**
 * A rolling compaction's note tells the agent to search with the recall tool: say before writing
 * where that tool comes from; when nothing gives it to the agent, run rolling's no-recall fallback.
 */
function recallToolChoice(compactor: Compactor<unknown>, projectDir: string, { io, err: c }: CommandContext): RecallToolReport | null {
  const check = checkRecallTool(compactor, projectDir, io.env);
  if (check === null) return null;
  const { tool } = check;
  if (check.givenBy !== null) {
    io.stderr.write(`compaction: note: the eviction note tells the agent to use ${tool}; ${check.givenBy} loads @compaction/pi, which gives pi's agent that tool.\n`);
    return { ...check, fallback: false };
  }
  if (check.assertedByConfig) {
    io.stderr.write(`compaction: note: the eviction note tells the agent to use ${tool}, which the config says the host offers itself (options.rolling.recall: true).\n`);
    return { ...check, fallback: false };
  }
  io.stderr.write(
    `${c.yellow("warning:")} nothing gives this session's agent ${tool} (the @compaction/pi extension is in none of pi's extension folders or settings for it), so evicted messages could not be searched: running rolling's no-recall fallback instead, a summary with nothing evicted. Load @compaction/pi in pi (see its README), or set options.rolling.recall: true if your host offers ${tool} itself.\n`,
  );
  return { ...check, fallback: true };
}

/** Whether the result can become pi's compaction entry (planPiCompaction), and the entry it keeps from. */
function planOf(plan: PiCompactionPlan, result: CompactionResult<unknown>): Plan {
  if (plan.ok) return { refusal: null, compaction: plan.compaction, firstKeptEntryId: plan.compaction.firstKeptEntryId };
  // The run's error stays behind the refusal: --verbose shows what a plugin threw.
  const cause = result.error === null ? {} : { cause: result.error };
  return { compaction: null, firstKeptEntryId: null, refusal: new CliError(ExitCode.FAILED, `${plan.reason} Nothing was written.`, plan.hint, cause) };
}

function reportOf(
  transcript: TranscriptContext,
  result: CompactionResult<unknown>,
  plan: Plan,
  options: CompactOptions,
  config: ConfigSummary,
  measure: TokenMeasure,
  afterRatio: number,
): Omit<CompactReport, "contextWindow" | "contextWindowSource" | "fitsWindow"> {
  return {
    session: { path: transcript.path, id: transcript.sessionId, format: transcript.format },
    config,
    dryRun: options.dryRun === true,
    status: result.status,
    reason: plan.refusal?.message ?? null,
    error: result.error === null ? null : { code: result.error.code, message: result.error.message, ...errorSource(result.error) },
    written: false,
    entryId: null,
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    measure,
    afterRatio,
    messagesBefore: transcript.messages.length,
    messagesAfter: result.messages.length,
    messagesCompacted: result.cut?.compactedIndices.length ?? 0,
    strategy: result.event?.strategy ?? result.cut?.selectedBy ?? null,
    layer: result.event?.layer ?? null,
    firstKeptEntryId: plan.firstKeptEntryId,
    splitTurn: result.cut?.isSplitTurn ?? false,
    focus: options.focus ?? null,
    warnings: result.warnings,
    summary: result.summary ?? null,
    upgrade: null,
    recallTool: null,
    setAside: null,
  };
}

/** What a run that cannot be written shows before the reason: Before, at which window, in which measure. */
function renderBefore(shown: string, messages: number, tokensBefore: number, measure: TokenMeasure, window: ContextWindowChoice, { out: c }: CommandContext): string {
  const recorded = recordedWindowNote(window);
  return [
    `${c.bold("Session")}   ${shown}`,
    `${c.bold("Before")}    ${formatTokens(tokensBefore)} tokens (${plural(messages, "message")})`,
    ...(recorded === null ? [] : [`${c.bold("Window")}    ${c.dim(recorded)}`]),
    `${c.bold("Measure")}   ${c.dim(describeMeasure(measure))}`,
    "",
  ].join("\n");
}

function renderPlan(
  transcript: TranscriptContext,
  result: CompactionResult<unknown>,
  firstKeptEntryId: string,
  tokensAfter: number,
  measure: TokenMeasure,
  countedBefore: number,
  window: ContextWindowChoice,
  { out: c }: CommandContext,
): string {
  const cut = result.cut as NonNullable<CompactionResult<unknown>["cut"]>;
  const layer = result.event?.layer ?? null;
  const recorded = recordedWindowNote(window);
  return [
    `${c.bold("Session")}   ${transcript.format === "pi" ? transcript.path : `${sessionLabel({ id: transcript.sessionId, format: transcript.format })} ${c.dim(`(${transcript.path})`)}`}`,
    `${c.bold("Before")}    ${formatTokens(result.tokensBefore)} tokens (${plural(transcript.messages.length, "message")})`,
    `${c.bold("After")}     ${(tokensAfter <= window.tokens ? c.green : c.red)(formatTokens(tokensAfter))} tokens (${plural(result.messages.length, "message")}: the summary and ${result.messages.length - 1} kept)${tokensAfter <= window.tokens ? "" : `, over the ${formatTokens(window.tokens)}-token window`}`,
    `${c.bold("Compacts")}  ${plural(cut.compactedIndices.length, "message")}, by ${result.event?.strategy ?? cut.selectedBy}${layer === null ? "" : ` (layer ${layer})`}`,
    `${c.bold("Keeps")}     from ${transcript.format === "pi" ? "entry " : ""}${firstKeptEntryId}${cut.isSplitTurn ? " (mid-turn)" : ""}`,
    ...(recorded === null ? [] : [`${c.bold("Window")}    ${c.dim(recorded)}`]),
    `${c.bold("Measure")}   ${c.dim(`${describeMeasure(measure)}; ${describeAfterMeasure(measure.counter, result.tokensBefore, countedBefore, transcript.messages.length)}`)}`,
    "",
  ].join("\n");
}
