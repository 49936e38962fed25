/**
 * Checks every store makes the same way (the memory, pi-file and SQLite stores here, the Postgres
 * store in @compaction/store-postgres): a compaction to append, a store used after `close`, the
 * header of a session to create.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { PiCompaction } from "../pi-compaction-plan.js";
import type { NewEntry } from "../new-entries.js";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "../types.js";

/** Header fields a new session is created with (`type`, `id` and `version` are the store's). */
export type NewSessionFields = Partial<Omit<SessionHeader, "type" | "id" | "version">>;

/**
 * pi's compaction entry for `compaction` (what `EntryStore.appendCompaction` writes), after
 * checking its fields: a CompactionError (INPUT_INVALID) naming each wrong field and `location`
 * otherwise, so nothing is written.
 */
export function compactionEntry(compaction: PiCompaction, location: string): NewEntry {
  const problems: string[] = [];
  if (typeof compaction !== "object" || compaction === null) problems.push(`it is ${String(compaction)}`);
  else {
    if (typeof compaction.summary !== "string" || compaction.summary === "") problems.push("`summary` is not a non-empty string");
    if (typeof compaction.firstKeptEntryId !== "string" || compaction.firstKeptEntryId === "") problems.push("`firstKeptEntryId` is not an entry id");
    if (typeof compaction.tokensBefore !== "number" || !Number.isFinite(compaction.tokensBefore) || compaction.tokensBefore < 0) {
      problems.push("`tokensBefore` is not a number of tokens");
    }
    if (typeof compaction.details !== "object" || compaction.details === null) problems.push("`details` (the CompactionEvent) is missing");
  }
  if (problems.length > 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot append the compaction to ${location}: ${problems.join("; ")}.`, {
      file: location,
      hint: "Pass the compaction planPiCompaction returned (plan.ok); nothing was written.",
    });
  }
  return {
    type: "compaction",
    summary: compaction.summary,
    firstKeptEntryId: compaction.firstKeptEntryId,
    tokensBefore: compaction.tokensBefore,
    details: compaction.details,
  };
}

/** The error for `call` (e.g. "append") on a store of `kind` at `location` after its `close()`. */
export function closedStoreError(kind: string, location: string, call: string): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot ${call}: the ${kind} store of ${location} was closed.`, {
    file: location,
    hint: "Open the session again (a closed store releases its handles and connections for good).",
  });
}

/**
 * The header of a new session `sessionId` in a store at `location` (what `create` of the SQLite
 * and Postgres stores makes): the fields given (a copied session's own creation time among them),
 * `cwd` the process's and `timestamp` now when not given, the current version. A field of the
 * wrong kind is a CompactionError (INPUT_INVALID) naming it: check before creating anything.
 */
export function newSessionHeader(sessionId: string, fields: NewSessionFields, location: string): SessionHeader {
  const wrong = (name: string, expected: string) =>
    new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot create session ${sessionId} in ${location}: \`create.${name}\` must be ${expected}, but it is ${JSON.stringify(fields[name]) ?? String(fields[name])}.`, {
      file: location,
      hint: `Leave \`${name}\` out for the default, or pass ${expected}; nothing was written.`,
    });
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot create session ${sessionId} in ${location}: \`create\` must be an object of header fields, but it is ${JSON.stringify(fields)}.`, {
      file: location,
      hint: "Pass e.g. { cwd: \"/srv/agent\" }, or {} for the defaults.",
    });
  }
  const { timestamp, cwd, parentSession } = fields;
  if (timestamp !== undefined && (typeof timestamp !== "string" || Number.isNaN(Date.parse(timestamp)))) throw wrong("timestamp", "an ISO 8601 time");
  if (cwd !== undefined && typeof cwd !== "string") throw wrong("cwd", "a directory path");
  if (parentSession !== undefined && typeof parentSession !== "string") throw wrong("parentSession", "a session file path");
  const { type: _type, id: _id, version: _version, timestamp: _timestamp, cwd: _cwd, ...rest } = fields as NewSessionFields & { type?: unknown; id?: unknown; version?: unknown };
  // pi's key order: type, version, id, timestamp, cwd, then the rest (parentSession, ...).
  return { type: "session", version: CURRENT_SESSION_VERSION, id: sessionId, timestamp: timestamp ?? new Date().toISOString(), cwd: cwd ?? process.cwd(), ...rest };
}
