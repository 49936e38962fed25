/**
 * Creating session files and finding them where pi-coding-agent keeps them:
 * `~/.pi/agent/sessions/--<cwd with "/" as "-">--/<timestamp>_<id>.jsonl`.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { fileExists, readHeaderLine } from "./append-context.js";
import { assignEntryFields, type NewEntry } from "./new-entries.js";
import { CURRENT_SESSION_VERSION, type SessionEntry, type SessionHeader } from "./types.js";

/** Overrides the directory that holds one session directory per cwd (pi's `~/.pi/agent/sessions`). */
export const SESSIONS_DIR_ENV = "COMPACTION_SESSIONS_DIR";
/** pi's own override of its agent directory; sessions are in its `sessions` folder. */
export const PI_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR";

export interface SessionsDirOptions {
  /** The directory holding one folder per cwd. Wins over the environment. */
  readonly sessionsDir?: string;
  /** Environment to read `COMPACTION_SESSIONS_DIR` / `PI_CODING_AGENT_DIR` from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface CreateSessionOptions {
  /** Working directory recorded in the header. */
  readonly cwd: string;
  /** Session id. Default: a new UUID version 7, as pi makes them. */
  readonly id?: string;
  /** Path of the session this one continues or was branched from. */
  readonly parentSession?: string;
}

export interface CreatedSession {
  readonly path: string;
  readonly header: SessionHeader;
  readonly entries: SessionEntry[];
}

/** A new session id: a UUID version 7 (time-ordered), the kind pi gives its sessions. */
export function createSessionId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** pi's file name for a session: `<ISO timestamp with ":" and "." as "-">_<id>.jsonl`. */
export function sessionFileName(id: string, timestamp: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`;
}

/**
 * Writes a new version-3 session file: the header line, then `entries` (linked in order, the
 * first as the root). Written atomically (a temporary file renamed into place, fsynced); refuses
 * to replace an existing file. Creates the directory if needed.
 */
export async function createSession(path: string, options: CreateSessionOptions, entries: readonly NewEntry[] = []): Promise<CreatedSession> {
  if (await fileExists(path)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot create session ${path}: a file already exists there.`, {
      file: path,
      hint: "Append to it with appendEntries, or choose a new path (sessionFileName(createSessionId(), timestamp)).",
    });
  }
  const timestamp = new Date().toISOString();
  const header: SessionHeader = {
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: options.id ?? createSessionId(),
    timestamp,
    cwd: options.cwd,
    ...(options.parentSession === undefined ? {} : { parentSession: options.parentSession }),
  };
  const written = assignEntryFields(entries, null, new Set());
  const text = [header, ...written].map((line) => JSON.stringify(line)).join("\n") + "\n";
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, text, { encoding: "utf8", fsync: true });
  return { path, header, entries: written };
}

/**
 * The directory holding one session folder per cwd: `options.sessionsDir`, else
 * `$COMPACTION_SESSIONS_DIR`, else `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
 */
export function sessionsBaseDir(options: SessionsDirOptions = {}): string {
  const env = options.env ?? process.env;
  const explicit = options.sessionsDir ?? nonEmpty(env[SESSIONS_DIR_ENV]);
  if (explicit !== undefined) return resolve(expandHome(explicit));
  const agentDir = nonEmpty(env[PI_AGENT_DIR_ENV]);
  if (agentDir !== undefined) return join(resolve(expandHome(agentDir)), "sessions");
  return join(homedir(), ".pi", "agent", "sessions");
}

/** pi's session folder for `cwd` (getDefaultSessionDir): `--` + cwd with separators and ":" as "-" + `--`. Not created. */
export function sessionDirForCwd(cwd: string, options: SessionsDirOptions = {}): string {
  const safe = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return join(sessionsBaseDir(options), safe);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function expandHome(path: string): string {
  if (path === "~") return homedir();
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

interface SessionFileInfo {
  readonly path: string;
  readonly id: string;
  readonly mtimeMs: number;
}

/** The session files in `dir` (`.jsonl` files whose first line is a session header). Missing dir: none. */
async function listSessionFiles(dir: string): Promise<SessionFileInfo[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const found: SessionFileInfo[] = [];
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const path = join(dir, name);
    const header = await tryReadHeader(path);
    if (header !== undefined) found.push({ path, id: header.id, mtimeMs: (await stat(path)).mtimeMs });
  }
  return found;
}

async function tryReadHeader(path: string): Promise<SessionHeader | undefined> {
  try {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      return await readHeaderLine(handle, path, size);
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** The most recently modified session file in `dir`, or null when it holds none (as pi's findMostRecentSession). */
export async function findMostRecentSession(dir: string): Promise<string | null> {
  const files = await listSessionFiles(dir);
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  return files[0]?.path ?? null;
}

export interface ResolveSessionOptions extends SessionsDirOptions {
  /** The project whose session folder is searched first. Default `process.cwd()`. */
  readonly cwd?: string;
}

/**
 * Finds a session file from what a user typed: a path to a file; a session id or the start of
 * one, looked up in the cwd's session folder and then in every other folder under the sessions
 * directory; or nothing, for the cwd's most recent session. Errors say what was searched.
 */
export async function resolveSession(idOrPath: string | undefined, options: ResolveSessionOptions = {}): Promise<string> {
  const cwd = options.cwd ?? process.cwd();
  const cwdDir = sessionDirForCwd(cwd, options);
  if (idOrPath === undefined || idOrPath.trim() === "") {
    const latest = await findMostRecentSession(cwdDir);
    if (latest !== null) return latest;
    throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No session file for ${cwd}: searched ${cwdDir} and found no .jsonl session in it.`, {
      hint: `Pass a session file path or id, or set ${SESSIONS_DIR_ENV} to the folder that holds your sessions.`,
    });
  }
  const asPath = resolve(idOrPath);
  if (await fileExists(asPath)) return asPath;
  if (looksLikePath(idOrPath)) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No session file at ${asPath}.`, {
      file: asPath,
      hint: "Check the path, or pass a session id (or the start of one) to look it up in the sessions directory.",
    });
  }
  const searched = [cwdDir];
  const inCwd = matchId(await listSessionFiles(cwdDir), idOrPath);
  if (inCwd !== undefined) return inCwd;
  const base = sessionsBaseDir(options);
  const others = (await listDirs(base)).filter((dir) => dir !== cwdDir);
  const everywhere: SessionFileInfo[] = [];
  for (const dir of others) everywhere.push(...(await listSessionFiles(dir)));
  searched.push(...others);
  const elsewhere = matchId(everywhere, idOrPath);
  if (elsewhere !== undefined) return elsewhere;
  throw new CompactionError(
    ErrorCodes.TRANSCRIPT_NOT_FOUND,
    `No session with id "${idOrPath}" (or an id starting with it), and no file by that name. Searched: ${asPath} (as a path), ${searched.join(", ")}${others.length === 0 ? ` (${base} holds no other session folders)` : ""}.`,
    { hint: `Pass the session file's path, or set ${SESSIONS_DIR_ENV} (or --sessions-dir) to the folder that holds your sessions.` },
  );
}

function looksLikePath(text: string): boolean {
  return isAbsolute(text) || text.includes("/") || text.includes(sep) || text.endsWith(".jsonl") || text.startsWith(".");
}

/** The one file whose id equals `query` or, failing that, starts with it; undefined when none; throws when several. */
function matchId(files: readonly SessionFileInfo[], query: string): string | undefined {
  const exact = files.filter((file) => file.id === query);
  const matches = exact.length > 0 ? exact : files.filter((file) => file.id.startsWith(query));
  if (matches.length === 0) return undefined;
  if (matches.length === 1) return (matches[0] as SessionFileInfo).path;
  throw new CompactionError(
    ErrorCodes.INPUT_INVALID,
    `Session id prefix "${query}" matches ${matches.length} sessions: ${matches.map((m) => `${m.id} (${m.path})`).join(", ")}.`,
    { hint: "Give more characters of the id, or the file's path." },
  );
}

async function listDirs(base: string): Promise<string[]> {
  try {
    const entries = await readdir(base, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => join(base, entry.name));
  } catch {
    return [];
  }
}
