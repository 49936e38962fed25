/**
 * `compaction compact`: compacts the session's context now and writes pi's `compaction` entry
 * (after showing what it would do and asking; `--dry-run` writes nothing).
 */
import {
  appendPiCompaction,
  type BoundaryLoad,
  compactPiBranch,
  type PiBranchCompaction,
  type PiCompaction,
  type PiCompactionPlan,
  type TranscriptFormat,
} from "@compaction/transcript";
import { type CompactionResult } from "@compaction/core";
import type { Command } from "commander";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { confirm } from "../confirm.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { loadCompactor } from "../load-compactor.js";
import { describeMeasure, formatTokens, sessionLabel, tokenMeasure, type TokenMeasure } from "../output.js";
import { assertWholeBranch, loadTranscriptContext, requirePiSession, resolveTarget, type TranscriptContext } from "../session-target.js";

interface CompactOptions {
  readonly session?: string;
  readonly agent?: string;
  readonly preset?: string;
  readonly focus?: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
  readonly json?: boolean;
}

/** What `compact --json` prints: the plan, and whether (and as which entry) it was written. */
export interface CompactReport {
  readonly session: { readonly path: string; readonly id: string | null; readonly format: TranscriptFormat };
  readonly dryRun: boolean;
  readonly status: CompactionResult<unknown>["status"];
  /** Why nothing was (or would be) compacted or written; null when it was. */
  readonly reason: string | null;
  readonly written: boolean;
  /** The compaction entry written, or null. */
  readonly entryId: string | null;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The measure of tokensBefore and tokensAfter (both the provider's, calibrated; see describeMeasure). */
  readonly measure: TokenMeasure;
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
}

/** Adds `compact` to the program. */
export function registerCompact(program: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  program
    .command("compact")
    .description("compact the session's context now and write the compaction entry pi reads")
    .option(...SESSION_OPTION)
    .option(...AGENT_OPTION)
    .option("-p, --preset <name>", "run this preset instead of the configured one (e.g. rolling, layered)")
    .option("-f, --focus <instruction>", "what the summary should focus on")
    .option("-n, --dry-run", "show what would be compacted; write nothing")
    .option("-y, --yes", "write without asking (needed when stdin is not a terminal)")
    .option("--json", "print one JSON object (the plan, and what was written) instead of text")
    .action(async (options: CompactOptions, command: Command) => {
      done(await compact(commandContext(command, io), options));
    });
}

async function compact(context: CommandContext, options: CompactOptions): Promise<ExitCodeValue> {
  const { io } = context;
  const selection = sessionSelection(context, options.session);
  const path = await resolveTarget(selection, io);
  const transcript = loadTranscriptContext(path, selection, io);
  const writing = options.dryRun !== true;
  if (writing) requireAppendable(path, requirePiSession(transcript, "write a compaction"));

  const compactor = await loadCompactor(io.cwd, { agent: options.agent, preset: options.preset, adapter: transcript.adapter });
  let compaction: PiBranchCompaction<unknown>;
  let measure: TokenMeasure;
  try {
    measure = tokenMeasure(compactor.tokens.counter.name, compactor.tokens.calibration(transcript.messages));
    // pi's compaction entry records a summary and an unchanged suffix: plugins must not count on
    // more. The dry run asks the same, so it shows what would be written.
    compaction = await compactPiBranch(compactor, transcript, {
      trigger: "manual",
      ...(options.focus === undefined ? {} : { focus: options.focus }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
    });
  } finally {
    compactor.dispose();
  }
  const { result } = compaction;
  for (const warning of result.warnings) io.stderr.write(`${context.err.yellow("warning:")} ${warning}\n`);

  const plan = planOf(compaction.plan);
  const report = (fields: Partial<CompactReport> = {}): CompactReport => ({ ...reportOf(transcript, result, plan, options, measure), ...fields });
  const refuse = (error: CliError): never => {
    if (options.json === true) io.stdout.write(`${JSON.stringify(report({ reason: error.message }), null, 2)}\n`);
    throw error;
  };
  if (plan.refusal !== null) {
    if (options.json !== true) io.stdout.write(`${context.out.bold("Session")}   ${path}\n${context.out.bold("Before")}    ${formatTokens(result.tokensBefore)} tokens (${transcript.messages.length} messages)\n`);
    return refuse(plan.refusal);
  }
  if (options.json !== true) io.stdout.write(renderPlan(transcript, result, plan.firstKeptEntryId as string, measure, context));
  if (!writing) {
    if (options.json === true) io.stdout.write(`${JSON.stringify(report(), null, 2)}\n`);
    else io.stdout.write(`${context.out.dim("Dry run: nothing written.")}\n`);
    return ExitCode.OK;
  }
  if (options.yes !== true) {
    if (io.stdin.isTTY !== true) {
      return refuse(
        new CliError(
          ExitCode.FAILED,
          "Not writing the compaction: stdin is not a terminal, so it cannot ask for confirmation. Nothing was written.",
          "Pass --yes to write without asking, or --dry-run to only look.",
        ),
      );
    }
    if (!(await confirm(io, `Write the compaction entry to ${path}?`))) {
      io.stderr.write("Declined: nothing written.\n");
      if (options.json === true) io.stdout.write(`${JSON.stringify(report({ reason: "Declined at the prompt." }), null, 2)}\n`);
      return ExitCode.FAILED;
    }
  }
  assertWholeBranch(path, selection);
  const entry = await appendPiCompaction(path, plan.compaction as PiCompaction);
  if (options.json === true) io.stdout.write(`${JSON.stringify(report({ written: true, entryId: entry.id }), null, 2)}\n`);
  else io.stdout.write(`${context.out.green("Compacted:")} wrote compaction entry ${entry.id}.\n`);
  return ExitCode.OK;
}

interface Plan {
  /** Why this result cannot be written (or was not compacted at all); null when it can. */
  readonly refusal: CliError | null;
  /** pi's entry to write, when it can be. */
  readonly compaction: PiCompaction | null;
  readonly firstKeptEntryId: string | null;
}

/** Whether the result can become pi's compaction entry (planPiCompaction), and the entry it keeps from. */
function planOf(plan: PiCompactionPlan): Plan {
  if (plan.ok) return { refusal: null, compaction: plan.compaction, firstKeptEntryId: plan.compaction.firstKeptEntryId };
  return { compaction: null, firstKeptEntryId: null, refusal: new CliError(ExitCode.FAILED, `${plan.reason} Nothing was written.`, plan.hint) };
}

function reportOf(transcript: TranscriptContext, result: CompactionResult<unknown>, plan: Plan, options: CompactOptions, measure: TokenMeasure): CompactReport {
  return {
    session: { path: transcript.path, id: transcript.sessionId, format: transcript.format },
    dryRun: options.dryRun === true,
    status: result.status,
    reason: plan.refusal?.message ?? null,
    written: false,
    entryId: null,
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    measure,
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
  };
}

function renderPlan(
  transcript: TranscriptContext,
  result: CompactionResult<unknown>,
  firstKeptEntryId: string,
  measure: TokenMeasure,
  { out: c }: CommandContext,
): string {
  const cut = result.cut as NonNullable<CompactionResult<unknown>["cut"]>;
  const layer = result.event?.layer ?? null;
  return [
    `${c.bold("Session")}   ${transcript.format === "pi" ? transcript.path : `${sessionLabel({ id: transcript.sessionId, format: transcript.format })} ${c.dim(`(${transcript.path})`)}`}`,
    `${c.bold("Before")}    ${formatTokens(result.tokensBefore)} tokens (${transcript.messages.length} messages)`,
    `${c.bold("After")}     ${c.green(formatTokens(result.tokensAfter))} tokens (${result.messages.length} messages: the summary and ${result.messages.length - 1} kept)`,
    `${c.bold("Compacts")}  ${plural(cut.compactedIndices.length, "message")}, by ${result.event?.strategy ?? cut.selectedBy}${layer === null ? "" : ` (layer ${layer})`}`,
    `${c.bold("Keeps")}     from ${transcript.format === "pi" ? "entry " : ""}${firstKeptEntryId}${cut.isSplitTurn ? " (mid-turn)" : ""}`,
    `${c.bold("Measure")}   ${c.dim(describeMeasure(measure))}`,
    "",
  ].join("\n");
}

/** pi's compaction entry can be appended only to a version 3 file. */
function requireAppendable(path: string, loaded: BoundaryLoad): void {
  if (loaded.version >= 3) return;
  throw new CliError(
    ExitCode.SESSION,
    `Cannot write a compaction to ${path}: it is a version ${loaded.version} session file, and entries can be appended only to version 3 files.`,
    "Open the session once in pi (it upgrades the file), or run with --dry-run to only look.",
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
