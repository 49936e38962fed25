/**
 * From our CompactionResult to the compaction pi writes: `summary`, `firstKeptEntryId`,
 * `tokensBefore`, and our CompactionEvent as `details`. Some results have no such form, and
 * say why.
 */
import type { CompactionEvent, CompactionResult } from "@compaction/core";

/** What `session_before_compact` returns as `compaction` (pi's CompactionResult, with our event as details). */
export interface PiCompaction {
  readonly summary: string;
  readonly firstKeptEntryId: string;
  readonly tokensBefore: number;
  readonly details: CompactionEvent;
}

/** A compaction pi can write, or why there is none. */
export type PiCompactionPlan =
  | { readonly ok: true; readonly compaction: PiCompaction }
  | { readonly ok: false; readonly reason: string; readonly hint: string };

/**
 * The compaction entry for `result`, whose input messages came from the entries `entryIds`
 * (index for index, as `buildContext` returns them). pi's entry keeps one unbroken run of entries
 * after the summary, so a result that keeps messages from before its cut (pinned ones), or that
 * only pruned (no cut), cannot be written.
 */
export function planPiCompaction(result: CompactionResult<unknown>, entryIds: readonly string[]): PiCompactionPlan {
  if (result.status !== "compacted") {
    const why = (result.reason ?? "no reason given").replace(/\.$/, "");
    return {
      ok: false,
      reason: `Nothing was compacted (${result.status}): ${why}.`,
      hint: result.error?.hint ?? (result.status === "noop" ? "The context may be small enough for this preset already." : "The session was left as it is."),
    };
  }
  const cut = result.cut;
  const event = result.event;
  if (cut === null || event === null) {
    return {
      ok: false,
      reason: "The preset only changed messages in place (e.g. pruned tool outputs) and chose no cut; pi's compaction entry cannot record that.",
      hint: "Nothing is lost: the extension prunes old tool outputs in what is sent to the model on every request.",
    };
  }
  if (cut.preservedIndices.length > 0) {
    return {
      ok: false,
      reason: `The compaction keeps ${cut.preservedIndices.length} message(s) from before its cut (pinned or system messages), which pi's compaction entry cannot record: it keeps one unbroken run of entries after the summary.`,
      hint: "Use a preset or plugins that do not pin messages for this session, or unpin them.",
    };
  }
  const firstKeptEntryId = entryIds[cut.firstKeptIndex];
  if (firstKeptEntryId === undefined) {
    return {
      ok: false,
      reason: `The cut keeps from message ${cut.firstKeptIndex}, but the branch has only ${entryIds.length} messages.`,
      hint: "This is a bug in the preset's cut; please report it with the session file.",
    };
  }
  return {
    ok: true,
    compaction: {
      summary: result.summary ?? "",
      firstKeptEntryId,
      tokensBefore: result.tokensBefore,
      // pi's messages carry no ids; the first kept entry's id is the boundary.
      details: { ...event, boundaryMessageId: event.boundaryMessageId ?? firstKeptEntryId },
    },
  };
}
