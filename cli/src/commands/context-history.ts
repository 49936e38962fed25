/** `compaction context history`: the compactions on the session's branch, newest first. */
import { mentionsCountedTokens } from "@compaction/core";
import { buildContext } from "@compaction/transcript";
import { type CommandContext, countOption } from "../command-context.js";
import { type CommandCall, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { compactionEntries, compactionRecord, type CompactionRecord } from "../compaction-history.js";
import { formatTokens, plural } from "../output.js";

interface HistoryOptions extends CommonOptions {
  readonly depth?: string;
}

const UNKNOWN = "—";

/** `compaction context history`. */
export const contextHistoryCommand = defineCommand({
  name: "history",
  description: "list the compactions on the session's branch, newest first",
  session: true,
  options: [["-d, --depth <n>", "show at most this many (default: all)"]],
  jsonHelp: "print a JSON array instead of text",
  parse: ({ options }: CommandCall<[], HistoryOptions>) => countOption(options.depth, "--depth", "Pass e.g. --depth 5, or leave it out to list all."),
  run: async ({ session, input: depth }) => {
    session.requirePiFormat("list compaction entries");
    const parsed = session.entries();
    return compactionEntries(buildContext(parsed.entries, { file: session.path }).branch)
      .reverse()
      .slice(0, depth)
      .map(compactionRecord);
  },
  text: (records, { session, context }) => renderHistory(records, session.shown, context),
});

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
    // The plugins and the core size against the budget in our count, not the provider's measure of Tokens.
    if (record.warnings.some(mentionsCountedTokens)) lines.push(`  ${c.dim("(token figures in warnings are our count; Tokens are in the provider's measure)")}`);
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
}
