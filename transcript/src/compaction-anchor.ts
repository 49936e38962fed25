/**
 * The anchor a pi branch's newest compaction gives its context (core's `ContextAnchor`): the After
 * our compaction recorded in the entry's `details` (`tokensAfterCompaction`, the provider's
 * measure of the summary and the kept messages, the figure `compact` printed) stands for the
 * messages it covers as a usage figure would, so the context's size right after a compaction is
 * that After, and later the After plus the calibrated count of what was appended since.
 *
 * Entries written before the After was recorded in the provider's measure hold our plain count:
 * they anchor all the same (the size then matches what `context history` shows for them) until
 * the next response's usage figure replaces it. pi's own compactions record no After: no anchor.
 * The anchor also carries the calibration the compaction recorded (`event.calibration`), which
 * measures what is appended after it until the kept messages' own usage figures give enough pairs.
 */
import { type ContextAnchor, readRecordedCalibration } from "@compaction/core";
import type { SessionContext } from "./context.js";

/** What the anchor is read from: a branch's context as `buildContext` and `loadBoundary` give it. */
export type AnchoredContext = Pick<SessionContext, "messages" | "entryIds" | "compaction" | "branch">;

/**
 * The newest compaction's recorded After and the index of the last message it covers (the
 * summary and the kept messages: every message from an entry before the compaction entry), or
 * undefined when the branch has no compaction or its entry records no After.
 */
export function compactionAnchor(context: AnchoredContext): ContextAnchor | undefined {
  const { compaction } = context;
  if (compaction === null) return undefined;
  const details = compaction.details as Record<string, unknown> | undefined;
  const tokens = details?.["tokensAfterCompaction"];
  if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) return undefined;
  const at = context.branch.findIndex((entry) => entry.id === compaction.id);
  if (at < 0) return undefined;
  const after = new Set(context.branch.slice(at + 1).map((entry) => entry.id));
  const firstAfter = context.entryIds.findIndex((id) => after.has(id));
  const lastIndex = (firstAfter < 0 ? context.messages.length : firstAfter) - 1;
  // The calibration the compaction measured with, when it recorded one (a usable one only).
  const calibration = readRecordedCalibration(details?.["calibration"]);
  return { tokens, lastIndex, ...(calibration === undefined ? {} : { calibration }) };
}
