/**
 * Runs a compactor over the branch pi is about to compact: the messages pi would send (its
 * boundary rule over `branchEntries`), the user's `/compact <focus>` as the focus, and pi's
 * AbortSignal. pi records a compaction only as a summary and the first entry kept, so the run is
 * `suffixOnly`: presets do not prune in place (the extension prunes in what it sends instead).
 */
import { buildContext, compactionAnchor, compactPiBranch, type PiCompactionPlan, type SessionEntry } from "@compaction/transcript";
import { type CompactionResult, type CompactionTrigger, type Compactor, type PiMessage, type Summarizer } from "@compaction/core";
import type { SessionBeforeCompactEvent } from "./pi-types.js";

/** Why pi compacts, as its event says since 0.79.10: `/compact`, its threshold, or a context-overflow error. */
export type PiCompactionReason = "manual" | "threshold" | "overflow";

/** The part of pi's event the compaction reads. */
export type BranchCompactEvent = Pick<SessionBeforeCompactEvent, "branchEntries" | "customInstructions" | "signal"> & {
  readonly preparation: { readonly tokensBefore: number; readonly settings: { readonly reserveTokens: number } };
  /** Why pi compacts (pi 0.79.10 and later); older pi leaves it out and the trigger is inferred. */
  readonly reason?: PiCompactionReason;
  /** Whether pi retries the failed turn after this compaction (overflow recovery; pi 0.79.10 and later). */
  readonly willRetry?: boolean;
};

export interface CompactBranchInput {
  /** The model's context window (pi's `ctx.model.contextWindow`). */
  readonly contextWindow: number;
  /** The agent the run is for (plugins may read it). */
  readonly agent?: string;
  /** The summarizer for this run instead of the compactor's (the no-model one, after waiting for a compaction prepared in the background ran out). */
  readonly summarizer?: Summarizer;
}

export interface BranchCompaction {
  readonly result: CompactionResult<PiMessage>;
  /** The entry to write, or why there is none. */
  readonly plan: PiCompactionPlan;
  readonly trigger: CompactionTrigger;
  /** The window the preset compacted to (see compactionWindow). */
  readonly contextWindow: number;
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
  const contextWindow = compactionWindow(event, input.contextWindow);
  // Before in the measure `compaction context status` shows: from our last compaction's recorded
  // After while no usage figure is newer.
  const anchor = compactionAnchor(context);
  const { result, plan } = await compactPiBranch(compactor, context, {
    contextWindow,
    trigger,
    ...(anchor === undefined ? {} : { anchor }),
    signal: event.signal,
    ...(focus ? { focus } : {}),
    ...(input.agent === undefined ? {} : { agent: input.agent }),
    ...(input.summarizer === undefined ? {} : { summarizer: input.summarizer }),
  });
  return { result, plan, trigger, contextWindow, messages: context.messages };
}

/**
 * Manual or automatic. pi 0.79.10 and later say why they compact (`reason`): `/compact` is manual,
 * its threshold and its overflow recovery are automatic. Older pi does not say: a compaction with
 * instructions is `/compact`; otherwise it is automatic when the context is past pi's own
 * threshold (window minus pi's `compaction.reserveTokens`), the only point at which such a pi
 * compacts by itself, and manual below it (its overflow recovery below that threshold counts as
 * manual, which makes every preset compact).
 */
export function inferTrigger(event: BranchCompactEvent, contextWindow: number): CompactionTrigger {
  if (event.reason !== undefined) return event.reason === "manual" ? "manual" : "auto";
  if (event.customInstructions !== undefined) return "manual";
  const threshold = contextWindow - event.preparation.settings.reserveTokens;
  return event.preparation.tokensBefore > threshold ? "auto" : "manual";
}

/**
 * The window the preset compacts to. On overflow recovery the provider has just refused a context
 * of about `tokensBefore` tokens, so the model's advertised window is not what this account gets
 * (pi 0.87 lists claude-sonnet-4-5 at 1,000,000 tokens, which needs Anthropic's long-context
 * access): the run compacts to the context that failed instead, or a preset that measures itself
 * against the window (rolling) would find nothing to do and pi could not retry.
 */
export function compactionWindow(event: BranchCompactEvent, contextWindow: number): number {
  if (event.reason !== "overflow") return contextWindow;
  const refused = event.preparation.tokensBefore;
  return refused > 0 && (contextWindow <= 0 || refused < contextWindow) ? refused : contextWindow;
}
