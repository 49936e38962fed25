/**
 * `openEntryStore(location)`: the session store a location names (see store-location.ts): a pi
 * session file (`openPiFileStore`) or a session in a SQLite database (`openSqliteStore`).
 * Postgres lives in its own package (@compaction/store-postgres, so that this one needs no
 * database client): a `postgres://` location is refused here with the way to open it.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { EntryStore } from "./entry-store.js";
import { openPiFileStore } from "./pi-file-store.js";
import { openSqliteStore } from "./sqlite-store.js";
import { parseStoreLocation, redactLocation } from "./store-location.js";

/** Opens the session `location` names: a pi file's path, or `sqlite:<file>#<session id>`. It must exist. */
export async function openEntryStore(location: string): Promise<EntryStore> {
  const parsed = parseStoreLocation(location);
  switch (parsed.kind) {
    case "pi-file":
      return openPiFileStore(parsed.path);
    case "sqlite":
      if (parsed.session === undefined) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `${location} names a SQLite database, not a session in it.`, {
          hint: "Add '#<session id>': sqlite:<file>#<session id>.",
        });
      }
      return openSqliteStore({ file: parsed.file, session: parsed.session });
    case "postgres":
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${redactLocation(location)} is a Postgres location; openEntryStore opens pi files and SQLite only, and Postgres sessions open with @compaction/store-postgres.`, {
        hint: "Open it with openPostgresStore({ connectionString, session }) from @compaction/store-postgres (the CLI does so itself).",
      });
  }
}
