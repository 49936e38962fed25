/**
 * The `session_before_compact` handler: the agent's preset compacts the branch, and pi writes
 * our compaction entry (`details` is our CompactionEvent). When the preset produced nothing pi
 * can write, the fallback decides: cancel (default) or let pi summarise with the model.
 */
import { existsSync } from "node:fs";
import { type Compactor, describeError, type PiMessage, providerRatio, type ResolvedConfig, warningsMeasureNote } from "@compaction/core";
import { readSession, type SessionEntry, sessionAutoCompact } from "@compaction/transcript";
import { recallSettings } from "@compaction/plugin-recall";
import type { CompactionResult as PiCompactionResult, ExtensionContext } from "./pi-types.js";
import { type BranchCompactEvent, compactBranch, inferTrigger } from "./compact-branch.js";
import { explain, hintOf } from "./explain.js";
import type { ResolvedPiCompactionOptions } from "./options.js";
import type { PreparedOutcome } from "./background-compaction.js";
import type { RecallStatus } from "./recall-link.js";

/** pi's `SessionBeforeCompactResult` (not exported by pi's package index). */
export interface SessionBeforeCompactResult {
  readonly cancel?: boolean;
  readonly compaction?: PiCompactionResult;
}

export interface BeforeCompactDeps {
  readonly settings: ResolvedPiCompactionOptions;
  /** The compactor for this context (rejects with the config's error). */
  readonly compactorFor: (ctx: ExtensionContext) => Promise<Compactor<PiMessage>>;
  /** Connects recall when the preset has it. */
  readonly recall: (compactor: Compactor<PiMessage>, ctx: ExtensionContext) => Promise<RecallStatus>;
  /**
   * The compaction prepared in the background for this session, when it still applies, else what
   * to compact with (see background-compaction.ts); absent: always compact now.
   */
  readonly prepared?: (event: BranchCompactEvent, ctx: ExtensionContext, compactor: Compactor<PiMessage>, contextWindow: number, trigger: "auto" | "manual") => Promise<PreparedOutcome>;
}

/**
 * The session's own auto-compaction setting. `compaction autocompact` appends it to the file,
 * which pi, holding the branch in memory, does not see (and pi's next entry leaves it off the
 * branch): so the latest setting in the file wins, then the branch's.
 */
function autoCompactSetting(event: BranchCompactEvent, ctx: ExtensionContext): boolean | undefined {
  const file = ctx.sessionManager.getSessionFile();
  if (file !== undefined && existsSync(file)) {
    try {
      const inFile = sessionAutoCompact(readSession(file, { skipCorrupt: true }).entries);
      if (inFile !== undefined) return inFile;
    } catch {
      // An unreadable file: fall back to the branch pi holds.
    }
  }
  return sessionAutoCompact(event.branchEntries as unknown as SessionEntry[]);
}

/** Handles one `session_before_compact` event; never throws. */
export async function beforeCompact(
  event: BranchCompactEvent,
  ctx: ExtensionContext,
  deps: BeforeCompactDeps,
): Promise<SessionBeforeCompactResult | undefined> {
  const { settings } = deps;
  const refuse = (reason: string, hint: string, level: "info" | "warning" = "warning"): SessionBeforeCompactResult | undefined => {
    if (!event.signal.aborted) {
      const then = settings.fallback === "pi" ? "pi will summarise with the model instead." : "The session was left as it is.";
      settings.report(level, ["compaction:", reason, hint, then].filter((part) => part !== "").join(" "), ctx);
    }
    return settings.fallback === "pi" ? undefined : { cancel: true };
  };

  let compactor: Compactor<PiMessage>;
  try {
    compactor = await deps.compactorFor(ctx);
  } catch (error) {
    return refuse(`could not load the compaction config: ${explain(error)}`, hintOf(error));
  }

  let recall: RecallStatus;
  try {
    recall = await deps.recall(compactor, ctx);
  } catch (error) {
    const toolName = recallSettings(compactor)?.toolName ?? "memory_search";
    recall = { state: "unavailable", toolName, reason: `its recall index could not be opened: ${describeError(error)}` };
  }

  const config = compactor.config as ResolvedConfig | undefined;
  const contextWindow = ctx.model?.contextWindow ?? config?.contextWindow ?? 0;
  const windowSource = ctx.model?.contextWindow !== undefined ? `pi's model ${ctx.model.provider}/${ctx.model.id}` : "contextWindow in .compactionrc";
  // `compaction autocompact off` turns automatic compaction off for this session, whatever pi's
  // own setting: cancel rather than let pi summarise instead.
  if (inferTrigger(event, contextWindow) === "auto" && autoCompactSetting(event, ctx) === false) {
    if (!event.signal.aborted) {
      settings.report("info", "compaction: auto-compaction is off for this session (set by the compaction CLI's 'autocompact off'; its 'autocompact on' turns it back on); not compacting. /compact still works.", ctx);
    }
    return { cancel: true };
  }
  let compaction;
  let prepared: Extract<PreparedOutcome, { kind: "prepared" }> | undefined;
  try {
    const outcome = (await deps.prepared?.(event, ctx, compactor, contextWindow, inferTrigger(event, contextWindow))) ?? { kind: "compact" };
    if (outcome.kind === "prepared") {
      prepared = outcome;
      compaction = outcome.compaction;
    } else {
      const agent = settings.agent(ctx);
      compaction = await compactBranch(compactor, event, { contextWindow, ...(agent === undefined ? {} : { agent }), ...(outcome.summarizer === undefined ? {} : { summarizer: outcome.summarizer }) });
    }
  } catch (error) {
    return refuse(`the compactor rejected the run: ${explain(error)}`, hintOf(error));
  }

  for (const warning of compaction.result.warnings) settings.report("warning", `compaction: ${warning}`, ctx);
  // The warnings size in our count; the figures pi and the status line show are the provider's.
  const note = warningsMeasureNote(compaction.result.warnings, compactor.tokens.counter.name, providerRatio(compaction.result.tokensBefore, compactor.tokens.total(compaction.messages)));
  if (note !== null) settings.report("info", `compaction: ${note}`, ctx);
  const { plan, result, trigger } = compaction;
  if (!plan.ok) {
    // pi asks again after every turn while it is past its threshold: an automatic run the preset
    // declines (nothing to do, or only pruning) is news, not a problem.
    const declined = trigger === "auto" && (result.status === "noop" || (result.status === "compacted" && result.cut === null));
    // Whether there is anything to compact depends on the window, which pi's model catalog sets
    // (pi 0.87 lists claude-sonnet-4-5 at 1,000,000 tokens where 0.73 had 200,000): name it.
    const source = event.reason === "overflow" ? "the size of the context the provider refused" : windowSource;
    const window = result.status === "noop" ? ` The window was ${compaction.contextWindow} tokens (${source}).` : "";
    return refuse(`${plan.reason}${window}`, plan.hint, declined ? "info" : "warning");
  }
  if (recall.state === "unavailable" && plan.compaction.summary.includes(recall.toolName)) {
    return refuse(
      `the preset evicted messages and points the agent at '${recall.toolName}', but the agent cannot have that tool: ${recall.reason}.`,
      "Use a preset without recall for this session (e.g. COMPACTION_PRESET=safeguard).",
    );
  }
  const { details } = plan.compaction;
  const background = prepared === undefined ? "" : ` (prepared in the background ${(prepared.ageMs / 1000).toFixed(1)} s ago; ${prepared.appended} messages appended since stay after it)`;
  settings.report(
    "info",
    `compaction: ${details.strategy}${details.layer === null ? "" : ` (${details.layer})`} compacted ${details.messagesCompacted} messages, ${details.tokensBeforeCompaction} -> ${details.tokensAfterCompaction} tokens${background}.`,
    ctx,
  );
  return { compaction: plan.compaction };
}
