/**
 * `compaction session copy <from> <to>`: moves a session between a pi session file and a
 * database, either way (or file to file, database to database): every entry, with its id, parent,
 * time and body as they are, and the header. The target must not hold the session yet (a file
 * that exists and is not empty, or a database session with entries, is refused: nothing is
 * overwritten). The entries are written in one batch (all or none) and read back to check.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { CURRENT_SESSION_VERSION, type EntryStore, type NewEntry, openPiFileStore, openSqliteStore, parseStoreLocation, redactLocation, type SessionEntry, type SessionHeader } from "@compaction/transcript";
import writeFileAtomic from "write-file-atomic";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { loadPostgresStore, openDatabaseStore } from "../database-target.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { formatTokens } from "../output.js";

/** What `session copy --json` prints. */
export interface CopyReport {
  readonly from: string;
  /** Where the session is now too (a file path, or `sqlite:<file>#<id>` / `postgres://...#<id>`). */
  readonly to: string;
  readonly sessionId: string;
  readonly entries: number;
  readonly compactions: number;
  /** Header fields the target could not keep as they were (a version 1 or 2 header is written as version 3). */
  readonly headerChanges: readonly string[];
}

interface CopyInput {
  readonly from: string;
  readonly to: string;
}

/** `compaction session copy <from> <to>`. */
export const sessionCopyCommand = defineCommand({
  name: "copy",
  arguments: [
    ["<from>", "the session to copy: a session file, sqlite:<file>#<id> or postgres://host/db#<id>"],
    ["<to>", "where to copy it: a new session file, sqlite:<file> or postgres://host/db (#<id> optional: default the session's own id)"],
  ],
  description: "copy a session between a session file and a database (SQLite, Postgres), every entry with its id and parent, and the header",
  parse: ({ context, args: [from, to] }: CommandCall<[string, string], CommonOptions>): CopyInput => ({ from: absolute(from, context), to: absolute(to, context) }),
  run: copySession,
  text: (report, { context }) => renderCopy(report, context),
});

/** File paths relative to the current directory; database locations as given. */
function absolute(location: string, context: CommandContext): string {
  const parsed = parseStoreLocation(location);
  if (parsed.kind === "pi-file") return resolve(context.io.cwd, parsed.path);
  if (parsed.kind === "sqlite") return `sqlite:${resolve(context.io.cwd, parsed.file)}${parsed.session === undefined ? "" : `#${parsed.session}`}`;
  return location;
}

async function copySession({ input }: CommandScope<CommonOptions, CopyInput>): Promise<CopyReport> {
  const source = await openDatabaseStore(input.from);
  let header: SessionHeader;
  let entries: SessionEntry[];
  try {
    header = await source.header();
    entries = await source.entries();
  } finally {
    await source.close();
  }
  const written = await writeTarget(input.to, header, entries);
  return {
    from: redactLocation(input.from),
    to: redactLocation(written.location),
    sessionId: written.sessionId,
    entries: entries.length,
    compactions: entries.filter((entry) => entry.type === "compaction").length,
    headerChanges: written.headerChanges,
  };
}

interface Written {
  readonly location: string;
  readonly sessionId: string;
  readonly headerChanges: readonly string[];
}

async function writeTarget(to: string, header: SessionHeader, entries: readonly SessionEntry[]): Promise<Written> {
  const parsed = parseStoreLocation(to);
  if (parsed.kind === "pi-file") return writeFile(parsed.path, header, entries);
  const sessionId = parsed.session ?? header.id;
  // Both database stores create the session with the whole header (its time, cwd, parent, ...).
  const create = headerFields(header);
  const target =
    parsed.kind === "sqlite"
      ? await openSqliteStore({ file: parsed.file, session: sessionId, create })
      : await (await loadPostgresStore()).openPostgresStore({ connectionString: parsed.connectionString, session: sessionId, create });
  try {
    await refuseNonEmpty(target);
    await target.append(entries.map((entry) => entry as unknown as NewEntry));
    await checkCopy(target, entries);
    const copied = await target.header();
    return { location: target.location, sessionId, headerChanges: headerChanges(header, copied, sessionId) };
  } finally {
    await target.close();
  }
}

/**
 * The header without `type` and `id`, as version 3 (the entries are read as version 3): what a
 * database store creates the session with.
 */
function headerFields(header: SessionHeader): Omit<SessionHeader, "type" | "id"> {
  const { type: _type, id: _id, ...rest } = header;
  return { ...rest, version: CURRENT_SESSION_VERSION };
}

async function refuseNonEmpty(target: EntryStore): Promise<void> {
  const existing = await target.entries();
  if (existing.length === 0) return;
  throw new CliError(
    ExitCode.SESSION,
    `Not copying: ${redactLocation(target.location)} already holds a session with ${existing.length} entries; nothing was written.`,
    "Copy to another session id (add #<new id> to the target), or to another database or file.",
  );
}

/** A new session file: the header (as version 3: the entries are read as version 3) and every entry, one line each. */
async function writeFile(path: string, header: SessionHeader, entries: readonly SessionEntry[]): Promise<Written> {
  if (existsSync(path) && statSync(path).size > 0) {
    throw new CliError(ExitCode.SESSION, `Not copying: ${path} exists and is not empty; nothing was written.`, "Name a new file, or move that one away first.");
  }
  const fileHeader: SessionHeader = { ...header, version: CURRENT_SESSION_VERSION };
  const text = `${[fileHeader, ...entries].map((line) => JSON.stringify(line)).join("\n")}\n`;
  await writeFileAtomic(path, text, { mode: 0o600 });
  const store = await openPiFileStore(path);
  try {
    await checkCopy(store, entries);
  } finally {
    await store.close();
  }
  const changes = header.version === CURRENT_SESSION_VERSION ? [] : [`version ${String(header.version ?? 1)} -> ${CURRENT_SESSION_VERSION} (the entries were read as version 3)`];
  return { location: path, sessionId: header.id, headerChanges: changes };
}

/** Reads the copy back: the same entries, ids and parents, in the same order. */
async function checkCopy(target: EntryStore, entries: readonly SessionEntry[]): Promise<void> {
  const copied = await target.entries();
  const same = copied.length === entries.length && copied.every((entry, i) => entry.id === entries[i]!.id && (entry.parentId ?? null) === (entries[i]!.parentId ?? null));
  if (same) return;
  throw new CliError(
    ExitCode.FAILED,
    `The copy in ${redactLocation(target.location)} does not read back as the source: ${copied.length} entries instead of ${entries.length}, or other ids or parents.`,
    "This is a bug in the target's store; please report it with both sessions. The source was not changed.",
  );
}

function headerChanges(before: SessionHeader, after: SessionHeader, sessionId: string): string[] {
  const changes: string[] = [];
  if (sessionId !== before.id) changes.push(`id ${before.id} -> ${sessionId}`);
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === "id" || key === "type") continue;
    const from = JSON.stringify(before[key]);
    const to = JSON.stringify(after[key]);
    if (from !== to) changes.push(`${key} ${from ?? "(none)"} -> ${to ?? "(none)"}`);
  }
  return changes;
}

function renderCopy(report: CopyReport, { out: c }: CommandContext): string {
  const lines = [
    `${c.green("Copied:")} session ${report.sessionId}, ${formatTokens(report.entries)} entries (${report.compactions} compaction${report.compactions === 1 ? "" : "s"}), ids and parents kept`,
    `  from ${report.from}`,
    `  to   ${report.to}`,
  ];
  if (report.headerChanges.length > 0) lines.push(c.dim(`  header: ${report.headerChanges.join("; ")}`));
  return `${lines.join("\n")}\n`;
}
