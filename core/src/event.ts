import { randomUUID } from "node:crypto";
import type { RecordedCalibration } from "./tokens/calibration.js";

export type CompactionTrigger = "manual" | "auto";

/**
 * One compaction, as recorded in a transcript (`details` of a pi `compaction` entry) and shown
 * by `compaction context history`.
 */
export interface CompactionEvent {
  readonly id: string;
  readonly type: "compaction";
  /** ISO 8601. */
  readonly timestamp: string;
  readonly summary: string;
  readonly messagesCompacted: number;
  /** The context before, as the provider counts it (the result's `tokensBefore`). */
  readonly tokensBeforeCompaction: number;
  /**
   * The compacted context in the same measure, the run's: our count of the compacted messages at
   * the ratio of `tokensBeforeCompaction` to our count of the input (`run.providerTokens`,
   * `tokens.providerTokensAfter`), the measure the strategies sized against. The result's
   * `tokensAfter` (its `countedTokensAfter` is our plain count).
   */
  readonly tokensAfterCompaction: number;
  readonly trigger: CompactionTrigger;
  /** Which layer or step ran, e.g. `prune`, `summarize`, `full`, `evict`. */
  readonly layer: string | null;
  /** The user's focus instruction, if any. */
  readonly customInstruction: string | null;
  /** Id of the first message kept verbatim after the summary, when messages have ids. */
  readonly boundaryMessageId: string | null;
  /** The plugin (strategy) whose cut produced this compaction. */
  readonly strategy: string;
  /** Warnings raised during the run. */
  readonly warnings: readonly string[];
  /**
   * The calibration the run measured with, when it was learned from usage figures (absent
   * otherwise, and in events of older releases): what the context it leaves is measured by until
   * that context's own usage figures give enough pairs again (`ContextAnchor.calibration`).
   */
  readonly calibration?: RecordedCalibration;
}

export interface CreateEventInput {
  summary: string;
  messagesCompacted: number;
  tokensBeforeCompaction: number;
  tokensAfterCompaction: number;
  trigger: CompactionTrigger;
  layer?: string | null;
  customInstruction?: string | null;
  boundaryMessageId?: string | null;
  strategy: string;
  warnings?: readonly string[];
  /** Recorded only when given (a run records it when its calibration was learned: `recordedCalibration`). */
  calibration?: RecordedCalibration | undefined;
  now?: Date;
}

export function createCompactionEvent(input: CreateEventInput): CompactionEvent {
  return {
    id: randomUUID(),
    type: "compaction",
    timestamp: (input.now ?? new Date()).toISOString(),
    summary: input.summary,
    messagesCompacted: input.messagesCompacted,
    tokensBeforeCompaction: input.tokensBeforeCompaction,
    tokensAfterCompaction: input.tokensAfterCompaction,
    trigger: input.trigger,
    layer: input.layer ?? null,
    customInstruction: input.customInstruction ?? null,
    boundaryMessageId: input.boundaryMessageId ?? null,
    strategy: input.strategy,
    warnings: [...(input.warnings ?? [])],
    ...(input.calibration === undefined ? {} : { calibration: input.calibration }),
  };
}
