/**
 * `compaction compact`: compacts the session's context now and writes pi's `compaction` entry
 * (after showing what it would do and asking; `--dry-run` writes nothing).
 */
import { appendCompaction, type BoundaryLoad, type CompactionResult, type PiMessage } from "@compaction/core";
import type { Command } from "commander";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { confirm } from "../confirm.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { loadCompactor } from "../load-compactor.js";
import { formatTokens } from "../output.js";
import { assertWholeBranch, loadTargetContext, resolveTarget } from "../session-target.js";

interface CompactOptions {
  readonly session?: string;
  readonly agent?: string;
  readonly preset?: string;
  readonly focus?: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
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
    .action(async (options: CompactOptions, command: Command) => {
      done(await compact(commandContext(command, io), options));
    });
}

async function compact(context: CommandContext, options: CompactOptions): Promise<ExitCodeValue> {
  const { io, out: c } = context;
  const selection = sessionSelection(context, options.session);
  const path = await resolveTarget(selection, io);
  const loaded = loadTargetContext(path, selection, io);
  const writing = options.dryRun !== true;
  if (writing) requireAppendable(path, loaded);

  const compactor = await loadCompactor(io.cwd, options.agent, options.preset);
  let result: CompactionResult<PiMessage>;
  try {
    result = await compactor.compact({
      messages: loaded.messages,
      trigger: "manual",
      ...(options.focus === undefined ? {} : { focus: options.focus }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
    });
  } finally {
    compactor.dispose();
  }

  io.stdout.write(`${c.bold("Session")}   ${path}\n`);
  for (const warning of result.warnings) io.stderr.write(`${context.err.yellow("warning:")} ${warning}\n`);
  if (result.status !== "compacted" || result.cut === null) {
    io.stdout.write(`${c.bold("Before")}    ${formatTokens(result.tokensBefore)} tokens (${loaded.messages.length} messages)\n`);
    throw new CliError(
      ExitCode.FAILED,
      `Nothing was compacted (${result.status}): ${(result.reason ?? "no reason given").replace(/\.$/, "")}.`,
      result.error?.hint ?? (result.status === "noop" ? "The context may already be small enough; nothing was written." : "Nothing was written."),
    );
  }
  const cut = result.cut;
  if (cut.preservedIndices.length > 0) {
    throw new CliError(
      ExitCode.FAILED,
      `The compaction keeps ${cut.preservedIndices.length} message(s) from before its cut (pinned or system messages), which pi's compaction entry cannot record: it keeps one unbroken run of entries after the summary. Nothing was written.`,
      "Use a preset or plugins that do not pin messages for this session, or unpin them.",
    );
  }
  const firstKeptEntryId = loaded.entryIds[cut.firstKeptIndex];
  if (firstKeptEntryId === undefined) {
    throw new CliError(ExitCode.FAILED, `The cut keeps from message ${cut.firstKeptIndex}, but the context has only ${loaded.entryIds.length} messages. Nothing was written.`);
  }

  const layer = result.event?.layer ?? null;
  io.stdout.write(
    [
      `${c.bold("Before")}    ${formatTokens(result.tokensBefore)} tokens (${loaded.messages.length} messages)`,
      `${c.bold("After")}     ${c.green(formatTokens(result.tokensAfter))} tokens (${result.messages.length} messages: the summary and ${result.messages.length - 1} kept)`,
      `${c.bold("Compacts")}  ${plural(cut.compactedIndices.length, "message")}, by ${result.event?.strategy ?? cut.selectedBy}${layer === null ? "" : ` (layer ${layer})`}`,
      `${c.bold("Keeps")}     from entry ${firstKeptEntryId}${cut.isSplitTurn ? " (mid-turn)" : ""}`,
      "",
    ].join("\n"),
  );
  if (!writing) {
    io.stdout.write(`${c.dim("Dry run: nothing written.")}\n`);
    return ExitCode.OK;
  }
  if (options.yes !== true) {
    if (io.stdin.isTTY !== true) {
      throw new CliError(
        ExitCode.FAILED,
        "Not writing the compaction: stdin is not a terminal, so it cannot ask for confirmation. Nothing was written.",
        "Pass --yes to write without asking, or --dry-run to only look.",
      );
    }
    if (!(await confirm(io, `Write the compaction entry to ${path}?`))) {
      io.stderr.write("Declined: nothing written.\n");
      return ExitCode.FAILED;
    }
  }
  assertWholeBranch(path, selection);
  const entry = await appendCompaction(path, result, { firstKeptEntryId, tokensBefore: result.tokensBefore });
  io.stdout.write(`${c.green("Compacted:")} wrote compaction entry ${entry.id}.\n`);
  return ExitCode.OK;
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
