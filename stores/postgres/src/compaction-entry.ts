/**
 * pi's compaction entry for a compaction to append, after the checks every store makes the same
 * way (transcript's store-checks.ts, which the package does not export): nothing is written when
 * a field is wrong.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { NewEntry, PiCompaction } from "@compaction/transcript";

/** The entry for `compaction`, or a CompactionError (INPUT_INVALID) naming each wrong field. */
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
