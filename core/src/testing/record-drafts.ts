/**
 * Records what the plugins drafted in each run, whether or not the core writes it: a compaction
 * that would not make the context smaller is refused (a `noop`), and a test of the plugins still
 * checks what they wrote, and can check the refusal against it.
 */
import type { CompactionPlugin } from "../compactor/plugin.js";
import { STAGE_AUGMENT } from "../compactor/stages.js";

/** One run's finished summary draft and the working-set indices its cut compacts. */
export interface RecordedDraft {
  readonly text: string;
  readonly kind: "summary" | "note" | "none";
  readonly compactedIndices: readonly number[];
}

/** A plugin tapping `summarize` after every addition (`STAGE_AUGMENT + 1`); `drafts` holds one entry per run, in order. */
export function recordDrafts(): CompactionPlugin & { readonly drafts: RecordedDraft[] } {
  const drafts: RecordedDraft[] = [];
  return {
    name: "record-drafts",
    drafts,
    apply(compactor) {
      compactor.hooks.summarize.tap({ name: "record-drafts", stage: STAGE_AUGMENT + 1 }, (draft, run) => {
        drafts.push({ text: draft.text, kind: draft.kind, compactedIndices: run.cut?.compactedIndices ?? [] });
        return draft;
      });
    },
  };
}
