/**
 * `compaction session branch [--at <entry-id>]`: a new session file holding the branch from the
 * root to one entry (core's branchSession). Without --at, on a terminal, the user picks one of the
 * branch's user messages.
 */
import { branchSession, buildContext, type MessageEntry } from "@compaction/transcript";
import { createPiAdapter } from "@compaction/core";
import type { Command } from "commander";
import { commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { askLine } from "../confirm.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { refuseOpenClawSnapshot } from "../openclaw-target.js";
import { assertWholeBranch, readTargetSession, requirePiFormat, resolveTarget, type SessionSelection } from "../session-target.js";

interface BranchOptions {
  readonly session?: string;
  readonly at?: string;
  readonly json?: boolean;
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

/** Adds `branch` to the `session` command group. */
export function registerSessionBranch(group: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  group
    .command("branch")
    .description("write a new session file holding the branch up to an entry (pick a user message when --at is left out)")
    .option(...SESSION_OPTION)
    .option("--at <entry-id>", "the entry the new branch ends at: an id or a unique start of one")
    .option("--json", "print one JSON object instead of text")
    .action(async (options: BranchOptions, command: Command) => {
      const context = commandContext(command, io);
      const selection = sessionSelection(context, options.session);
      const path = await resolveTarget(selection, io);
      requirePiFormat(path, "branch the session");
      refuseOpenClawSnapshot(path, "branch the session");
      const atEntryId = options.at ?? (await pickEntry(context, path, selection));
      assertWholeBranch(path, selection);
      const branched = await branchSession(path, { atEntryId });
      const c = context.out;
      if (options.json === true) {
        const report: BranchReport = { path: branched.path, id: branched.header.id, atEntryId: branched.atEntryId, from: { path } };
        io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else io.stdout.write(`${c.green("Branched:")} ${branched.path}\n${c.bold("Session")}   ${branched.header.id}\n${c.bold("Ends at")}   entry ${branched.atEntryId}\n`);
      done(ExitCode.OK);
    });
}

/** Lists the branch's user messages on stderr and reads the number of one from the terminal. */
async function pickEntry(context: CommandContext, path: string, selection: SessionSelection): Promise<string> {
  const { io } = context;
  if (io.stdin.isTTY !== true) {
    throw new CliError(ExitCode.USAGE, "No entry to branch at: --at was not given and stdin is not a terminal to pick one on.", "Pass --at <entry-id> (an id of a line in the session file, or its start).");
  }
  const points = userMessages(path, selection, io);
  if (points.length === 0) throw new CliError(ExitCode.USAGE, `The branch of ${path} has no user messages to pick from.`, "Pass --at <entry-id>.");
  const width = String(points.length).length;
  points.forEach((point, index) => io.stderr.write(`${String(index + 1).padStart(width)}  ${context.err.dim(point.entryId)}  ${point.firstLine}\n`));
  const answer = (await askLine(io, `Branch at which message? [1-${points.length}] `)).trim();
  const chosen = /^\d+$/.test(answer) ? points[Number(answer) - 1] : undefined;
  if (chosen === undefined) throw new CliError(ExitCode.USAGE, `Expected a number from 1 to ${points.length}, but got '${answer}'. Nothing was written.`);
  return chosen.entryId;
}

function userMessages(path: string, selection: SessionSelection, io: CliIo): BranchPoint[] {
  const parsed = readTargetSession(path, selection, io);
  const adapter = createPiAdapter();
  return buildContext(parsed.entries, { file: path })
    .branch.filter((entry): entry is MessageEntry => entry.type === "message" && entry.message.role === "user")
    .map((entry) => ({ entryId: entry.id, firstLine: (adapter.readFacts(entry.message).text.trim().split("\n")[0] ?? "").slice(0, 100) }));
}
