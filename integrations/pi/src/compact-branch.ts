/**
 * Runs a compactor over the branch pi is about to compact: the messages pi would send (its
 * boundary rule over `branchEntries`), the user's `/compact <focus>` as the focus, and pi's
 * AbortSignal. pi records a compaction only as a summary and the first entry kept, so the run is
 * `suffixOnly`: presets do not prune in place (the extension prunes in what it sends instead).
 */
import { buildContext, compactPiBranch, type PiCompactionPlan, type SessionEntry } from "@compaction/transcript";
import { type CompactionResult, type CompactionTrigger, type Compactor, type PiMessage } from "@compaction/core";
import type { SessionBeforeCompactEvent } from "@mariozechner/pi-coding-agent";

/** The part of pi's event the compaction reads. */
export type BranchCompactEvent = Pick<SessionBeforeCompactEvent, "branchEntries" | "customInstructions" | "signal"> & {
  readonly preparation: { readonly tokensBefore: number; readonly settings: { readonly reserveTokens: number } };
};

export interface CompactBranchInput {
  /** The model's context window (pi's `ctx.model.contextWindow`). */
  readonly contextWindow: number;
  /** The agent the run is for (plugins may read it). */
  readonly agent?: string;
}

export interface BranchCompaction {
  readonly result: CompactionResult<PiMessage>;
  /** The entry to write, or why there is none. */
  readonly plan: PiCompactionPlan;
  readonly trigger: CompactionTrigger;
  /** The branch's messages, as compacted. */
  readonly messages: readonly PiMessage[];
}

/** Compacts the event's branch; never throws for plugin failures (see Compactor.compact), only for invalid input. */
export async function compactBranch(
  compactor: Compactor<PiMessage>,
  event: BranchCompactEvent,
  input: CompactBranchInput,
): Promise<BranchCompaction> {
  const context = buildContext(event.branchEntries as unknown as SessionEntry[]);
  const trigger = inferTrigger(event, input.contextWindow);
  const focus = event.customInstructions?.trim();
  const { result, plan } = await compactPiBranch(compactor, context, {
    contextWindow: input.contextWindow,
    trigger,
    signal: event.signal,
    ...(focus ? { focus } : {}),
    ...(input.agent === undefined ? {} : { agent: input.agent }),
  });
  return { result, plan, trigger, messages: context.messages };
}

/**
 * pi does not tell an extension why it compacts. A compaction with instructions is `/compact`;
 * otherwise it is automatic when the context is past pi's own threshold (window minus pi's
 * `compaction.reserveTokens`), the only point at which pi compacts by itself, and manual below it.
 * (pi's overflow recovery below that threshold counts as manual, which makes every preset compact.)
 */
export function inferTrigger(event: BranchCompactEvent, contextWindow: number): CompactionTrigger {
  if (event.customInstructions !== undefined) return "manual";
  const threshold = contextWindow - event.preparation.settings.reserveTokens;
  return event.preparation.tokensBefore > threshold ? "auto" : "manual";
}
