/** `compaction session list --db <location>`: the sessions a database holds, newest first. */
import { resolve } from "node:path";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { type DatabaseSessionInfo, listDatabaseSessions } from "../database-target.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { redactLocation } from "@compaction/transcript";

interface ListOptions extends CommonOptions {
  readonly db?: string;
}

/** What `session list --json` prints. */
export interface SessionListReport {
  readonly database: string;
  readonly sessions: readonly (DatabaseSessionInfo & { readonly location: string })[];
}

/** `compaction session list --db <location>`. */
export const sessionListCommand = defineCommand({
  name: "list",
  description: "list the sessions in a database (SQLite or Postgres), newest first, with the location --session takes",
  options: [["--db <location>", "the database: sqlite:<file> or postgres://user@host:port/db"]],
  parse: ({ context, options }: CommandCall<[], ListOptions>): string => {
    if (options.db === undefined || options.db.trim() === "") {
      throw new CliError(ExitCode.USAGE, "session list needs --db: the database to list.", "Pass --db sqlite:<file> or --db postgres://user@host/db.");
    }
    const db = options.db.replace(/#.*$/, "");
    return db.startsWith("sqlite:") ? `sqlite:${resolve(context.io.cwd, db.slice("sqlite:".length))}` : db;
  },
  run: async ({ input: database }: CommandScope<ListOptions, string>): Promise<SessionListReport> => {
    const sessions = await listDatabaseSessions(database);
    return { database: redactLocation(database), sessions: sessions.map((session) => ({ ...session, location: `${redactLocation(database)}#${session.id}` })) };
  },
  text: (report, { context }) => renderList(report, context),
});

function renderList(report: SessionListReport, { out: c }: CommandContext): string {
  if (report.sessions.length === 0) return `No sessions in ${report.database}.\n`;
  const lines = report.sessions.map((session) => {
    const facts = [session.entries === undefined ? null : `${session.entries} entries`, session.updatedAt ?? null, session.cwd ?? null].filter((fact) => fact !== null);
    return `${c.bold(session.id)}  ${c.dim(facts.join("  "))}\n  --session ${session.location}`;
  });
  return `${report.sessions.length} session${report.sessions.length === 1 ? "" : "s"} in ${report.database}, newest first:\n\n${lines.join("\n")}\n`;
}
