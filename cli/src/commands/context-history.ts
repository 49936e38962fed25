/** `compaction context history`: the compactions on the session's branch, newest first. */
import { buildContext } from "@compaction/transcript";
import type { Command } from "commander";
import { commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { compactionEntries, compactionRecord, type CompactionRecord } from "../compaction-history.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { formatTokens, plural } from "../output.js";
import { readTargetSession, requirePiFormat, resolveTarget } from "../session-target.js";

interface HistoryOptions {
  readonly session?: string;
  readonly depth?: string;
  readonly json?: boolean;
}

const UNKNOWN = "—";

/** Adds `history` to the `context` command group. */
export function registerContextHistory(group: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  group
    .command("history")
    .description("list the compactions on the session's branch, newest first")
    .option(...SESSION_OPTION)
    .option("-d, --depth <n>", "show at most this many (default: all)")
    .option("--json", "print a JSON array instead of text")
    .action(async (options: HistoryOptions, command: Command) => {
      const context = commandContext(command, io);
      const depth = parseDepth(options.depth);
      const selection = sessionSelection(context, options.session);
      const path = await resolveTarget(selection, io);
      requirePiFormat(path, "list compaction entries");
      const parsed = readTargetSession(path, selection, io);
      const records = compactionEntries(buildContext(parsed.entries, { file: path }).branch)
        .reverse()
        .slice(0, depth)
        .map(compactionRecord);
      io.stdout.write(options.json === true ? `${JSON.stringify(records, null, 2)}\n` : renderHistory(records, path, context));
      done(ExitCode.OK);
    });
}

function parseDepth(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const depth = Number(text);
  if (!Number.isInteger(depth) || depth < 1) {
    throw new CliError(ExitCode.USAGE, `--depth expects a whole number of at least 1, but got '${text}'.`, "Pass e.g. --depth 5, or leave it out to list all.");
  }
  return depth;
}

function renderHistory(records: readonly CompactionRecord[], path: string, { out: c }: CommandContext): string {
  if (records.length === 0) return `No compactions on this session's branch (${path}).\n`;
  const blocks = records.map((record) => {
    const after = record.tokensAfter === null ? UNKNOWN : formatTokens(record.tokensAfter);
    const lines = [
      `${c.bold(record.timestamp)}  ${c.dim(`entry ${record.entryId}`)}`,
      `  Trigger    ${record.trigger ?? UNKNOWN}`,
      `  Strategy   ${record.strategy}${record.layer === null ? "" : ` (layer ${record.layer})`}`,
      `  Tokens     ${formatTokens(record.tokensBefore)} -> ${after}`,
      `  Compacted  ${record.messagesCompacted === null ? UNKNOWN : plural(record.messagesCompacted, "message")}`,
      `  Focus      ${record.focus ?? UNKNOWN}`,
    ];
    for (const warning of record.warnings) lines.push(`  ${c.yellow("warning:")} ${warning}`);
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
}
