/**
 * Postgres and network failures as errors a user can act on: each names the store's location
 * (never the password), says what happened, and hints at what to do.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

/** True for an error that means the connection is gone or never came (the server, the network). */
export function isConnectionError(error: unknown): boolean {
  const { code, message } = fields(error);
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03")) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(message);
}

/**
 * `error` (from pg or the network) as a CompactionError about `doing` (e.g. "append to the
 * session") at `location`; CompactionErrors pass through unchanged.
 */
export function postgresError(error: unknown, location: string, doing: string): CompactionError {
  if (error instanceof CompactionError) return error;
  const { code, message } = fields(error);
  const detail = code === undefined ? message : `${message} (${code})`;
  if (code === "28P01" || code === "28000") {
    return new CompactionError(ErrorCodes.INPUT_INVALID, `The Postgres server at ${location} refused the login, so the store could not ${doing}: ${detail}.`, {
      file: location,
      hint: "Check the user and password in the connection string (or PGUSER/PGPASSWORD), and that pg_hba.conf lets this host in.",
      cause: error,
    });
  }
  if (code === "3D000") {
    return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `The database in ${location} does not exist, so the store could not ${doing}: ${detail}.`, {
      file: location,
      hint: "Create it (`createdb <name>`) or name an existing database in the connection string.",
      cause: error,
    });
  }
  if (isConnectionError(error)) {
    return new CompactionError(
      ErrorCodes.TRANSCRIPT_LOCKED,
      `Lost or could not make the connection to the Postgres server at ${location}, so the store could not ${doing}: ${detail}. Nothing was half-written: a write is one transaction, applied whole or not at all.`,
      {
        file: location,
        hint: "Check that the server is running and reachable at that host and port (e.g. `pg_isready -h <host> -p <port>`), then retry.",
        cause: error,
      },
    );
  }
  return new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Postgres failed to ${doing} at ${location}: ${detail}.`, {
    file: location,
    hint: "The server's log has the details; nothing was half-written (each write is one transaction).",
    cause: error,
  });
}

function fields(error: unknown): { code: string | undefined; message: string } {
  if (typeof error !== "object" || error === null) return { code: undefined, message: String(error) };
  const record = error as { code?: unknown; message?: unknown; errors?: unknown };
  let message = typeof record.message === "string" ? record.message : String(error);
  // Node's AggregateError (a host that resolves to several addresses) keeps the cause inside.
  if (message === "" && Array.isArray(record.errors) && record.errors.length > 0) return fields(record.errors[0]);
  if (message === "") message = "no message";
  return { code: typeof record.code === "string" ? record.code : undefined, message };
}
