/**
 * OpenClaw's sessions as `--session` targets: `openclaw:<agentId>` (that agent's most recently
 * updated session), an OpenClaw session key `agent:<agentId>:<rest>`, `openclaw:<agentId>:<sessionId>`,
 * or the path of an `openclaw-agent.sqlite` (its most recent session). The databases are found
 * under OpenClaw's state directory (`$OPENCLAW_STATE_DIR`, else `~/.openclaw`).
 *
 * OpenClaw's store is only read (node:sqlite, read-only). The commands that read sessions work on
 * a snapshot of the session's entries written as a pi session file under the cache directory
 * (`$XDG_CACHE_HOME/compaction/openclaw/<agentId>/<sessionId>.jsonl`, else `~/.cache/...`),
 * rewritten from the database on every run, which is also where `search` keeps its index.
 * Commands that write refuse a snapshot (`refuseOpenClawSnapshot`): a compaction or a setting
 * written there would never reach OpenClaw.
 */
import { chmodSync, openSync, readSync, closeSync } from "node:fs";
import { join } from "node:path";
import {
  agentIdOfSessionKey,
  isSqliteFile,
  listOpenClawAgents,
  type OpenClawSession,
  openClawAgentDatabase,
  openClawStateDir,
  readOpenClawSession,
} from "@compaction/transcript";
import { cacheDir, writeCacheFile } from "./cache-dir.js";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
import type { CliIo } from "./io.js";

/** Snapshots written in this process: snapshot path -> what it is a copy of. */
const snapshots = new Map<string, string>();

/** What `--session` names in OpenClaw, or undefined when it is not an OpenClaw target. */
export type OpenClawTarget =
  | { readonly kind: "agent"; readonly agentId: string; readonly sessionId?: string }
  | { readonly kind: "key"; readonly agentId: string; readonly sessionKey: string }
  | { readonly kind: "database"; readonly database: string };

export function parseOpenClawTarget(session: string | undefined): OpenClawTarget | undefined {
  if (session === undefined) return undefined;
  const short = /^openclaw:([^:]+)(?::(.+))?$/.exec(session);
  if (short !== null) {
    const agentId = short[1] as string;
    return short[2] === undefined ? { kind: "agent", agentId } : { kind: "agent", agentId, sessionId: short[2] };
  }
  const agentId = agentIdOfSessionKey(session);
  if (agentId !== undefined) return { kind: "key", agentId, sessionKey: session };
  if (session.endsWith(".sqlite") && isSqlite(session)) return { kind: "database", database: session };
  return undefined;
}

/** Reads the OpenClaw session `target` names and writes its snapshot; the snapshot's path. */
export function openClawSnapshot(target: OpenClawTarget, io: CliIo): string {
  const location = { env: io.env };
  const database = target.kind === "database" ? target.database : openClawAgentDatabase(target.agentId, location);
  let session: OpenClawSession;
  try {
    session = readOpenClawSession(
      database,
      target.kind === "key" ? { sessionKey: target.sessionKey } : target.kind === "agent" && target.sessionId !== undefined ? { sessionId: target.sessionId } : {},
    );
  } catch (error) {
    if (target.kind !== "database" && (error as { code?: unknown }).code === "COMPACTION_TRANSCRIPT_NOT_FOUND") {
      const agents = listOpenClawAgents(location);
      const known = agents.length === 0 ? `no agent databases under ${openClawStateDir(location)}` : `agents there: ${agents.join(", ")}`;
      throw new CliError(ExitCode.SESSION, `${(error as Error).message} (${known})`, (error as { hint?: string }).hint ?? "");
    }
    throw error;
  }
  const agentId = target.kind === "database" ? agentFromDatabasePath(database) : target.agentId;
  const dir = join(cacheDir(io), "openclaw", safeName(agentId));
  const path = join(dir, `${safeName(session.sessionId)}.jsonl`);
  // The conversation itself: readable by the user alone.
  writeCacheFile(path, `${session.lines.join("\n")}\n`);
  // A folder made by an earlier version: made private too, where it can be.
  try {
    chmodSync(dir, 0o700);
  } catch {
    // Not ours: the file itself is still private.
  }
  const source = `OpenClaw session ${session.sessionKey ?? session.sessionId} in ${database}`;
  snapshots.set(path, source);
  io.stderr.write(`compaction: reading ${source} (read-only; snapshot ${path})\n`);
  return path;
}

/** Throws for a snapshot of an OpenClaw session: `what` would write to a copy OpenClaw never reads. */
export function refuseOpenClawSnapshot(path: string, what: string): void {
  const source = snapshots.get(path);
  if (source === undefined) return;
  throw new CliError(
    ExitCode.SESSION,
    `Cannot ${what}: this is ${source}, which this tool only reads (OpenClaw's SQLite store is written by OpenClaw alone).`,
    "In OpenClaw, use /compact, or select the compaction context engine (@compaction/openclaw) to compact by your .compactionrc preset.",
  );
}

export function isOpenClawSnapshot(path: string): boolean {
  return snapshots.has(path);
}

function agentFromDatabasePath(database: string): string {
  const parts = database.split(/[\\/]/);
  // <state>/agents/<agentId>/agent/openclaw-agent.sqlite
  return parts.length >= 4 && parts[parts.length - 2] === "agent" ? (parts[parts.length - 3] as string) : "database";
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_");
}

function isSqlite(path: string): boolean {
  try {
    const fd = openSync(path, "r");
    try {
      const head = Buffer.alloc(16);
      readSync(fd, head, 0, 16, 0);
      return isSqliteFile(head);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
