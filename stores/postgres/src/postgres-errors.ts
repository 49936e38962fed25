/**
 * Postgres and network failures as errors a user can act on: each names the store's location
 * (never the password) and the server's host and port, says what happened, and hints at what to
 * do. A server that cannot be reached, does not answer in time, refuses the login or drops the
 * connection mid-write is `COMPACTION_STORE_UNAVAILABLE` (a retry may succeed once it is back),
 * never `COMPACTION_TRANSCRIPT_LOCKED`, which means another writer holds the session.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

/** Codes of a connection that never came: nothing listens, the host is unknown or unreachable. */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "57P03"]);
/** Codes of a connection that was there and went away. */
const LOST_CODES = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "57P01", "57P02"]);
/** Codes of a login the server refused (wrong password; no pg_hba.conf entry or no such role). */
const LOGIN_CODES = new Set(["28P01", "28000"]);

const TIMEOUT_MESSAGE = /connection timeout|timeout expired|timeout exceeded when trying to connect/i;
const LOST_MESSAGE = /Connection terminated|Client has encountered a connection error|terminating connection/i;

/** True for an error that means the connection is gone or never came (the server, the network). */
export function isConnectionError(error: unknown): boolean {
  const { code, message } = fields(error);
  if (code !== undefined && (UNREACHABLE_CODES.has(code) || LOST_CODES.has(code) || code.startsWith("08"))) return true;
  return TIMEOUT_MESSAGE.test(message) || LOST_MESSAGE.test(message);
}

/** Where a failure happened: while connecting (`pool.connect()`), or on a connection that was open. */
export type FailureStage = "connect" | "query";

/**
 * `error` (from pg or the network) as a CompactionError about `doing` (e.g. "append to the
 * session") at `location` (`postgres://host:port/db#session`), in `stage`; CompactionErrors pass
 * through unchanged.
 */
export function postgresError(error: unknown, location: string, doing: string, stage: FailureStage = "query"): CompactionError {
  if (error instanceof CompactionError) return error;
  const { code, message } = fields(error);
  const detail = code === undefined ? message : `${message} (${code})`;
  const server = serverOf(location);
  if (code !== undefined && LOGIN_CODES.has(code)) {
    return new CompactionError(ErrorCodes.STORE_UNAVAILABLE, `The Postgres server at ${server} refused the login for ${location}, so the store could not ${doing}: ${detail}.`, {
      file: location,
      hint: "Check the user and password in the connection string (or PGUSER/PGPASSWORD, ~/.pgpass), and that the server's pg_hba.conf lets this host in.",
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
    const [host, port] = hostAndPort(server);
    const check = `Check that the server is running and listens at ${server} (\`pg_isready -h ${host} -p ${port}\`) and that the connection string names that host and port`;
    if (TIMEOUT_MESSAGE.test(message)) {
      return new CompactionError(
        ErrorCodes.STORE_UNAVAILABLE,
        `The Postgres server at ${server} did not answer within the connect timeout, so the store could not ${doing} (${location}): ${detail}. Nothing was written.`,
        { file: location, hint: `${check}; a slow network may need a larger \`connect_timeout\` (seconds) in the connection string. Then retry.`, cause: error },
      );
    }
    if (stage === "connect" || (code !== undefined && UNREACHABLE_CODES.has(code))) {
      return new CompactionError(ErrorCodes.STORE_UNAVAILABLE, `Could not connect to the Postgres server at ${server}, so the store could not ${doing} (${location}): ${detail}. Nothing was written.`, {
        file: location,
        hint: `${check}, then retry.`,
        cause: error,
      });
    }
    return new CompactionError(
      ErrorCodes.STORE_UNAVAILABLE,
      `Lost the connection to the Postgres server at ${server}, so the store could not ${doing} (${location}): ${detail}. Nothing was half-written: a write is one transaction, applied whole or not at all.`,
      { file: location, hint: `${check}, then retry: the session is as it was before this call.`, cause: error },
    );
  }
  return new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Postgres failed to ${doing} at ${location}: ${detail}.`, {
    file: location,
    hint: "The server's log has the details; nothing was half-written (each write is one transaction).",
    cause: error,
  });
}

/** `host:port` of a `postgres://host:port/db#session` location (the location itself if it is not one). */
function serverOf(location: string): string {
  try {
    const url = new URL(location);
    return url.host === "" ? location : url.host;
  } catch {
    return location;
  }
}

function hostAndPort(server: string): [string, string] {
  const colon = server.lastIndexOf(":");
  if (colon < 0 || server.endsWith("]")) return [server, "5432"];
  return [server.slice(0, colon), server.slice(colon + 1)];
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
