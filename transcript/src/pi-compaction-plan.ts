/**
 * From our CompactionResult to the compaction entry pi writes: `summary`, `firstKeptEntryId`,
 * `tokensBefore`, and our CompactionEvent as `details`. Some results have no such form, and
 * say why. Every host that records compactions in a pi session file (the CLI, the context
 * manager, the pi extension) decides with this one function.
 */
import type { CompactionEvent, CompactionResult } from "@compaction/core";

/** The fields of pi's compaction entry (also what pi's `session_before_compact` takes as `compaction`). */
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
 * (index for index, as `buildContext` and `loadBoundary` return them). pi's entry is a summary
 * followed by one unbroken run of entries, so a result that did not compact, that keeps messages
 * from before its cut (pinned ones), that only changed messages in place (no cut), or that has
 * no summary (a drop with no note) cannot be written. (A run with `suffixOnly`, as these hosts
 * make, never ends with the in-place case: the core turns it into a noop.)
 */
export function planPiCompaction(result: CompactionResult<unknown>, entryIds: readonly string[]): PiCompactionPlan {
  if (result.status !== "compacted") {
    const why = (result.reason ?? "no reason given").replace(/\.$/, "");
    return {
      ok: false,
      reason: `Nothing was compacted (${result.status}): ${why}.`,
      hint: result.error?.hint ?? (result.status === "noop" ? "The context may already be small enough for this preset." : "The session was left as it is."),
    };
  }
  const cut = result.cut;
  const event = result.event;
  if (cut === null || event === null) {
    return {
      ok: false,
      reason: "The preset only changed messages in place (e.g. pruned tool outputs) and chose no cut; pi's compaction entry cannot record that.",
      hint: "Compact with suffixOnly set (hosts of session files do), so such runs end as a noop; prune what is sent instead.",
    };
  }
  if (result.summary === null) {
    return {
      ok: false,
      reason: "The compaction dropped messages without a summary or note, and pi's compaction entry needs a summary.",
      hint: "Use a strategy that leaves a summary or an eviction note (e.g. rolling with evictionNote: true) for session files.",
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
      hint: "This is a bug in the plugin that chose the cut; please report it with the session file.",
    };
  }
  return {
    ok: true,
    compaction: {
      summary: result.summary,
      firstKeptEntryId,
      tokensBefore: result.tokensBefore,
      // pi's messages carry no ids; the first kept entry's id is the boundary.
      details: { ...event, boundaryMessageId: event.boundaryMessageId ?? firstKeptEntryId },
    },
  };
}

/**
 * The entry for a compaction prepared in the background and put in place after `since` (the
 * messages appended since its snapshot, and their tokens): pi's entry goes after them (they stay in
 * the context, between the kept messages and the entry), so the After it records (the anchor the
 * context's size starts from, up to the entry) counts them too.
 */
export function withAppended(compaction: PiCompaction, since: { readonly messages: readonly unknown[]; readonly tokens: number } | undefined): PiCompaction {
  if (since === undefined || since.messages.length === 0) return compaction;
  const details = compaction.details;
  return { ...compaction, details: { ...details, tokensAfterCompaction: details.tokensAfterCompaction + since.tokens } };
}
