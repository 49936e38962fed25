/**
 * Where a session is, as one string (what `--session` and `EntryStore.location` take):
 *
 * - a pi session file: its path (`~/.pi/agent/sessions/.../2026-...jsonl`);
 * - a session in a SQLite database: `sqlite:<file>#<session id>` (`sqlite:./sessions.db#0194f3a2-...`);
 * - a session in Postgres: `postgres://user@host:5432/db#<session id>` (or `postgresql://`); the
 *   password is best left to `PGPASSWORD` or `~/.pgpass`, so it is never in a location.
 *
 * `sqlite:<file>` and `postgres://...` without `#<id>` name a database (for listing its sessions).
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

/** A location taken apart. `session` is undefined when the location names a database only. */
export type StoreLocation =
  | { readonly kind: "pi-file"; readonly path: string }
  | { readonly kind: "sqlite"; readonly file: string; readonly session: string | undefined }
  | { readonly kind: "postgres"; readonly connectionString: string; readonly session: string | undefined };

const POSTGRES = /^postgres(?:ql)?:\/\//i;

/** True when `location` names a database session or database (`sqlite:`, `postgres://`), not a file. */
export function isDatabaseLocation(location: string): boolean {
  return location.startsWith("sqlite:") || POSTGRES.test(location);
}

/** Takes a location apart (see the file's note); anything that is not `sqlite:` or `postgres://` is a file path. */
export function parseStoreLocation(location: string): StoreLocation {
  if (typeof location !== "string" || location.trim() === "") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `A session location must be a non-empty string; found ${JSON.stringify(location)}.`, {
      hint: "Pass a pi session file's path, sqlite:<file>#<session id>, or postgres://host/db#<session id>.",
    });
  }
  if (location.startsWith("sqlite:")) {
    const { base, session } = splitSession(location.slice("sqlite:".length), location);
    const file = base.startsWith("//") ? base.slice(2) : base;
    if (file === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `The location ${JSON.stringify(location)} names no database file.`, {
        hint: "Write sqlite:<file>#<session id>, e.g. sqlite:./sessions.db#0194f3a2-....",
      });
    }
    return { kind: "sqlite", file, session };
  }
  if (POSTGRES.test(location)) {
    const { base, session } = splitSession(location, location);
    return { kind: "postgres", connectionString: base, session };
  }
  return { kind: "pi-file", path: location };
}

/** A location without its password, for messages: `postgres://user:secret@host/db` becomes `postgres://user@host/db`. */
export function redactLocation(location: string): string {
  return location.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1@");
}

function splitSession(text: string, location: string): { base: string; session: string | undefined } {
  const at = text.lastIndexOf("#");
  if (at < 0) return { base: text, session: undefined };
  const session = decodeURIComponent(text.slice(at + 1));
  if (session === "") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `The location ${JSON.stringify(redactLocation(location))} ends in '#' with no session id after it.`, {
      hint: "Put the session id after '#', or leave '#' out to name the database (e.g. for 'compaction session list').",
    });
  }
  return { base: text.slice(0, at), session };
}
