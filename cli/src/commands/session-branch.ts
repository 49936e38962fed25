/**
 * `compaction session branch [--at <entry-id>]`: a new session file holding the branch from the
 * root to one entry (core's branchSession). Without --at, on a terminal, the user picks one of the
 * branch's user messages.
 */
import { branchSession, buildContext, type MessageEntry } from "@compaction/transcript";
import { CompactionError, createPiAdapter, ErrorCodes } from "@compaction/core";
import type { CommandContext } from "../command-context.js";
import { type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { askLine } from "../confirm.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import type { TargetSession } from "../session-target.js";

interface BranchOptions extends CommonOptions {
  readonly at?: string;
}

/** What `session branch --json` prints. */
export interface BranchReport {
  /** The new session file. */
  readonly path: string;
  readonly id: string;
  /** The entry the new branch ends at. */
  readonly atEntryId: string;
  /** The session it was branched from. */
  readonly from: { readonly path: string };
}

/** A user message of the branch the user can branch at. */
interface BranchPoint {
  readonly entryId: string;
  readonly firstLine: string;
}

/** `compaction session branch`. */
export const sessionBranchCommand = defineCommand({
  name: "branch",
  description: "write a new session file holding the branch up to an entry (pick a user message when --at is left out)",
  session: true,
  options: [["--at <entry-id>", "the entry the new branch ends at: an id or a unique start of one"]],
  run: async ({ context, options, session }: CommandScope<BranchOptions, undefined>): Promise<BranchReport> => {
    session.requirePiFormat("branch the session");
    session.refuseOpenClawSnapshot("branch the session");
    session.refuseDatabase("branch the session");
    refuseUnversioned(session);
    const atEntryId = options.at ?? (await pickEntry(context, session));
    session.assertWholeBranch();
    const branched = await branchSession(session.path, { atEntryId });
    return { path: branched.path, id: branched.header.id, atEntryId: branched.atEntryId, from: { path: session.path } };
  },
  text: (report, { context: { out: c } }) => `${c.green("Branched:")} ${report.path}\n${c.bold("Session")}   ${report.id}\n${c.bold("Ends at")}   entry ${report.atEntryId}\n`,
});

/**
 * A version 1 file has no entry ids to branch at. transcript's branchSession refuses it too, with
 * the library's fix (`upgradeSession`); on the command line the fix is a command.
 */
function refuseUnversioned(session: TargetSession): void {
  const { version } = session.boundary();
  if (version >= 2) return;
  throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Cannot branch ${session.path}: it is a version ${version} session file, whose entries have no ids to branch at.`, {
    file: session.path,
    hint: `Upgrade it first with compaction session upgrade --session ${session.path} (keeps a .bak copy), or open it once in pi.`,
  });
}

/** Lists the branch's user messages on stderr and reads the number of one from the terminal. */
async function pickEntry(context: CommandContext, session: TargetSession): Promise<string> {
  const { io } = context;
  if (io.stdin.isTTY !== true) {
    throw new CliError(ExitCode.USAGE, "No entry to branch at: --at was not given and stdin is not a terminal to pick one on.", "Pass --at <entry-id> (an id of a line in the session file, or its start).");
  }
  const points = userMessages(session);
  if (points.length === 0) throw new CliError(ExitCode.USAGE, `The branch of ${session.path} has no user messages to pick from.`, "Pass --at <entry-id>.");
  const width = String(points.length).length;
  points.forEach((point, index) => io.stderr.write(`${String(index + 1).padStart(width)}  ${context.err.dim(point.entryId)}  ${point.firstLine}\n`));
  const answer = (await askLine(io, `Branch at which message? [1-${points.length}] `)).trim();
  const chosen = /^\d+$/.test(answer) ? points[Number(answer) - 1] : undefined;
  if (chosen === undefined) throw new CliError(ExitCode.USAGE, `Expected a number from 1 to ${points.length}, but got '${answer}'. Nothing was written.`);
  return chosen.entryId;
}

function userMessages(session: TargetSession): BranchPoint[] {
  const parsed = session.entries();
  const adapter = createPiAdapter();
  return buildContext(parsed.entries, { file: session.path })
    .branch.filter((entry): entry is MessageEntry => entry.type === "message" && entry.message.role === "user")
    .map((entry) => ({ entryId: entry.id, firstLine: (adapter.readFacts(entry.message).text.trim().split("\n")[0] ?? "").slice(0, 100) }));
}
