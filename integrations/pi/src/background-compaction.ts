/**
 * Background compaction in pi: the session's `HostLoop` prepares the compaction at the end of a
 * turn and `session_before_compact` returns it at once. When to compact stays pi's decision, so
 * the loop's threshold is pi's own (its window less its `compaction.reserveTokens`) and the
 * prepare mark leads it.
 *
 * 1. At `turn_end` / `agent_end`, past the prepare mark, the preset compacts the branch as it is
 *    then (`compactPiBranch` on a snapshot, as the handler would), while pi goes on.
 * 2. When pi asks to compact (its threshold, `/compact`, `session.compact()`, overflow recovery),
 *    the prepared compaction is returned when it still applies: its snapshot is still the start of
 *    the branch pi compacts (the same entries, in order: the same branch head or one grown from it,
 *    no compaction since), it compacted, and pi's entry can record it. pi's entry goes after the
 *    entries appended since, which stay in the context. One still in flight is waited for, at most
 *    `waitMs`; then pi's compaction runs on its own (an automatic one with the no-model summary).
 * 3. A prepared compaction that no longer applies (another branch, a compaction written since, a
 *    `/compact <focus>` that asks for another summary) is dropped, never returned, and reported
 *    with what it cost. So is one pi never asks for before a compaction replaces its context.
 */
import {
  type BackgroundEvent,
  type CompactionResult,
  type Compactor,
  describeBackgroundEvent,
  type HostLoop,
  type PiMessage,
  startPreparation,
  type Summarizer,
  takePreparation,
  untouchedResult,
} from "@compaction/core";
import { buildContext, compactionAnchor, compactPiBranch, planPiCompaction, type SessionEntry, withAppended } from "@compaction/transcript";
import { type BranchCompactEvent, type BranchCompaction, compactionWindow } from "./compact-branch.js";

/** pi's own reserve for the reply (`compaction.reserveTokens`) until a compaction event says the session's. */
export const PI_DEFAULT_RESERVE_TOKENS = 16_384;

/** Where the messages for the user go, as the extension's `report` option takes them. */
export type BackgroundReport = (level: "info" | "warning", message: string) => void;

/** What the run of a preparation needs besides the snapshot. */
export interface PrepareContext {
  readonly compactor: Compactor<PiMessage>;
  readonly contextWindow: number;
  readonly agent?: string;
  readonly report: BackgroundReport;
}

/**
 * After a turn: starts preparing the compaction of the branch in `branch` when the loop says so
 * (past the prepare mark, nothing prepared); drops a ready one that no longer applies. Anything
 * else (`apply`, `wait`, `compact`) is pi's to ask for.
 */
export function prepareAfterTurn(loop: HostLoop<PiMessage>, branch: readonly unknown[], input: PrepareContext): void {
  const context = buildContext(branch as SessionEntry[]);
  const anchor = compactionAnchor(context);
  const tokens = input.compactor.tokens.contextTokens(context.messages, anchor).tokens;
  const step = loop.next(tokens, context.messages, context.entryIds);
  if (step.dropped !== null) reportBackground({ type: "dropped", cost: step.dropped }, input.report);
  if (step.action !== "prepare") return;
  const entryIds = context.entryIds;
  startPreparation(loop, step.reason, { tokens, messages: context.messages, keys: entryIds }, {
    run: async (snapshot, { targetTokens, signal }): Promise<CompactionResult<PiMessage>> => {
      try {
        const { result } = await compactPiBranch(input.compactor, { messages: snapshot, entryIds }, {
          contextWindow: input.contextWindow,
          trigger: "auto",
          signal,
          ...(anchor === undefined ? {} : { anchor }),
          ...(targetTokens === undefined ? {} : { targetTokens }),
          ...(input.agent === undefined ? {} : { agent: input.agent }),
        });
        return result;
      } catch (error) {
        return untouchedResult(snapshot, tokens, "failed", `the compaction prepared in the background could not run: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    report: (event) => reportBackground(event, input.report),
  });
}

/** What `session_before_compact` does with the session's preparation. */
export type PreparedOutcome =
  /** Return this compaction (prepared `ageMs` ago, `appended` messages since). */
  | { readonly kind: "prepared"; readonly compaction: BranchCompaction; readonly ageMs: number; readonly appended: number }
  /** Compact now, with `summarizer` when given (the no-model one: the wait for the preparation ran out). */
  | { readonly kind: "compact"; readonly summarizer?: Summarizer };

/**
 * The compaction pi asked for (`event`, with `trigger`), from the loop's preparation when it still
 * applies (core's `takePreparation`, see the file's comment) and pi's entry can record it; else
 * what to compact with.
 */
export async function takePrepared(
  loop: HostLoop<PiMessage>,
  event: BranchCompactEvent,
  trigger: "auto" | "manual",
  report: BackgroundReport,
): Promise<PreparedOutcome> {
  const context = buildContext(event.branchEntries as unknown as SessionEntry[]);
  const tokens = event.preparation.tokensBefore;
  const host = { report: (e: BackgroundEvent) => reportBackground(e, report) };
  const taken = await takePreparation(loop, { tokens, messages: context.messages, keys: context.entryIds }, { trigger, focus: event.customInstructions, signal: event.signal }, host);
  if (taken.kind === "compact") return taken.summarizer === undefined ? { kind: "compact" } : { kind: "compact", summarizer: taken.summarizer };
  const { preparation, result, appended } = taken;
  const drop = (why: string): PreparedOutcome => {
    const cost = loop.drop(why);
    if (cost !== null) host.report({ type: "dropped", cost });
    return { kind: "compact" };
  };
  const grown = Math.max(0, tokens - preparation.tokens);
  // pi's overflow recovery: the provider refused a context of about tokensBefore, so what is put in place must be smaller than that.
  const limit = compactionWindow(event, loop.contextWindow);
  if (event.reason === "overflow" && result.tokensAfter + grown >= limit) return drop(`the provider refused a context of ${limit} tokens, and it would leave ${result.tokensAfter + grown}`);
  const plan = planPiCompaction(result, preparation.keys as readonly string[]);
  if (!plan.ok) return drop(plan.reason);
  loop.applied(preparation);
  const compaction: BranchCompaction = {
    result,
    plan: { ok: true, compaction: withAppended(plan.compaction, { messages: appended, tokens: grown }) },
    trigger,
    contextWindow: loop.contextWindow,
    // The messages it compacted (what its tokensBefore measured).
    messages: preparation.snapshot,
  };
  return { kind: "prepared", compaction, ageMs: preparation.age(loop.now()), appended: appended.length };
}

/** A background event as a message for the user (`compaction: ...`); none for `waiting` (its `wait` says how long). */
export function reportBackground(event: BackgroundEvent, report: BackgroundReport): void {
  const message = describeBackgroundEvent(event, "pi's next compaction");
  if (message !== null) report("info", message);
}
