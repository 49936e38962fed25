import { CompactionError, ErrorCodes } from "../errors.js";
import type { Cut } from "./cut.js";
import type { MessageView } from "./message-view.js";
import { isCutPoint } from "./turns.js";

export interface FindCutPointOptions {
  /** Keep at most this many tokens of the newest messages verbatim. */
  readonly keepRecentTokens: number;
  /** Never cut before this index (e.g. the previous summary). Default 0. */
  readonly startIndex?: number;
  /** Keep at least this many of the newest messages, even past `keepRecentTokens`. Default 0. */
  readonly minKeepMessages?: number;
}

/**
 * The cut that keeps the largest suffix of whole messages starting at a valid cut point (not a
 * tool result, not the system prompt) whose tokens fit `keepRecentTokens`. When not even the
 * newest valid suffix fits, it keeps that newest valid suffix (the caller's budget check then
 * decides). Cutting at an assistant message inside a turn is allowed; the core reports it as a
 * split turn. Returns `firstKeptIndex === startIndex` when everything fits (nothing to compact).
 */
export function findCutPoint(view: MessageView, options: FindCutPointOptions): Cut {
  if (!(options.keepRecentTokens >= 0)) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `findCutPoint needs keepRecentTokens of 0 or more; found ${String(options.keepRecentTokens)}.`,
      { hint: "Pass the number of newest tokens to keep verbatim, e.g. 20000." },
    );
  }
  const { facts, tokens } = view;
  const n = facts.length;
  const start = Math.max(0, options.startIndex ?? 0);
  const minKeep = Math.max(0, options.minKeepMessages ?? 0);
  let accumulated = 0;
  let best = -1;
  let newestValid = -1;
  for (let i = n - 1; i >= start; i--) {
    accumulated += tokens[i] ?? 0;
    const f = facts[i];
    if (!f || !isCutPoint(f)) continue;
    if (newestValid < 0) newestValid = i;
    const keptSoFar = best < 0 ? 0 : n - best;
    if (accumulated <= options.keepRecentTokens || keptSoFar < minKeep) best = i;
    else break; // older cut points only keep more

  }
  if (accumulated <= options.keepRecentTokens) return { firstKeptIndex: start };
  if (best >= 0) return { firstKeptIndex: best };
  if (newestValid >= 0) return { firstKeptIndex: newestValid };
  return { firstKeptIndex: n };
}
