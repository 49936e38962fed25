/**
 * Checks every store makes the same way (the memory, pi-file and SQLite stores here, the Postgres
 * store in @compaction/store-postgres): a compaction to append, a store used after `close`.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { PiCompaction } from "../pi-compaction-plan.js";
import type { NewEntry } from "../new-entries.js";

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
