import {
  type CompactionPlugin,
  type CompactionRun,
  type Cut,
  createOptionsValidator,
  findCutPoint,
  keptRoom,
  type MessageAdapter,
  type RequestShaping,
  STAGE_PRUNE,
  STAGE_STRATEGY,
  type SummaryDraft,
  summarizeCut,
  isEmptyDraft,
} from "@compaction/core";
import { type CutRoom, fullLayerCut, summarizeLayerCut } from "./choose-cut.js";
import { type KeepLimit, keepLimit } from "./keep-limit.js";
import { chooseSummaryLayer, shouldPrune } from "./layers.js";
import { checkThresholdOrder, LAYERED_OPTIONS_SCHEMA, type LayeredOptions } from "./options.js";
import { pruneToolOutputs, toolOutputTokens } from "./prune.js";
import { pruneRequest } from "./prune-request.js";

export const PLUGIN_NAME = "layered";

/** The warning a full compaction (layer 3) adds to the result and its event. */
export const FULL_COMPACTION_WARNING =
  "full compaction: everything but pinned messages and the newest messages (summarizeProtectTokens, or the last turn whole when longer) was summarised";

/** The warning of a full compaction that also summarised the early part of the last turn. */
export const FULL_SPLIT_COMPACTION_WARNING =
  "full compaction: everything but pinned messages and the newest part of the last turn was summarised (the last turn alone did not fit the budget, or nothing preceded it)";

/** What `layered` leaves in `run.state.get(PLUGIN_NAME)` for later plugins. */
export interface LayeredRunState {
  /** Tool outputs replaced by markers in this run (0 when layer 1 did not apply). */
  readonly prunedCount: number;
  /** Tokens pruning saved, by the compactor's counter. */
  readonly prunedTokens: number;
  /** Layer 3 kept only the newest part of the last turn. */
  readonly splitLastTurn: boolean;
}

const validateOptions = createOptionsValidator<LayeredOptions>(PLUGIN_NAME, LAYERED_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/**
 * Validates `layered` options and fills in defaults. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for
 * an unknown or ill-typed option, a threshold outside (0, 1], or thresholds that do not rise
 * (pruneThreshold < summarizeThreshold < fullThreshold).
 */
export function resolveLayeredOptions(options?: Partial<LayeredOptions>): LayeredOptions {
  const resolved = validateOptions(options);
  checkThresholdOrder(PLUGIN_NAME, resolved);
  return resolved;
}

/**
 * Layered compaction: prune old tool outputs (layer 1, `beforeCompact`, and in what every host
 * sends, `shapeRequest`), then summarise older messages (layer 2), then summarise everything but
 * pinned messages, the newest messages layer 2 keeps and the last turn when it fits (layer 3). `run.layer` and the event say which layer ran last. Pinned messages are never
 * pruned or summarised.
 */
export function layered(options?: Partial<LayeredOptions>): CompactionPlugin {
  const resolved = resolveLayeredOptions(options);
  return {
    name: PLUGIN_NAME,
    options: resolved as unknown as Readonly<Record<string, unknown>>,
    apply(compactor) {
      const adapter = compactor.adapter as MessageAdapter<unknown>;
      compactor.hooks.beforeCompact.tap({ name: PLUGIN_NAME, stage: STAGE_PRUNE }, (run: CompactionRun<unknown>) =>
        pruneLayer(run, adapter, resolved),
      );
      compactor.hooks.selectCut.tap({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (run: CompactionRun<unknown>) =>
        selectLayer(run, resolved),
      );
      compactor.hooks.summarize.tapPromise(
        { name: PLUGIN_NAME, stage: STAGE_STRATEGY },
        (draft: SummaryDraft, run: CompactionRun<unknown>) => summarizeLayer(draft, run, resolved),
      );
      // Layer 1 again on what each host sends: the only place a host that records just summary +
      // suffix (a pi session file) can prune, and a pure function of the context, so the same
      // context gives the same request.
      compactor.hooks.shapeRequest.tap({ name: PLUGIN_NAME, stage: STAGE_PRUNE }, (messages: readonly unknown[], shaping: RequestShaping<unknown>) =>
        pruneRequest(messages, shaping, resolved).messages,
      );
    },
  };
}

export default layered;

/**
 * Layer 1: replaces old tool outputs with markers when the thresholds are passed and pruning
 * saves enough. Skipped when the host records only a summary and an unchanged suffix
 * (`run.suffixOnly`): it cannot record pruned outputs, so pruning is its job when it sends.
 */
function pruneLayer<T>(run: CompactionRun<T>, adapter: MessageAdapter<T>, options: LayeredOptions): void {
  setState(run, { prunedCount: 0, prunedTokens: 0, splitLastTurn: false });
  if (run.suffixOnly) return;
  if (!shouldPrune(run.contextTokens / run.usableWindow, toolOutputTokens(run.view), options)) return;
  const pruned = pruneToolOutputs(run.messages, {
    adapter,
    factsOf: (m) => run.factsOf(m),
    tokensOf: (m) => run.tokensOf(m),
    protectTokens: options.pruneProtectTokens,
  });
  if (pruned.prunedIndices.length === 0 || pruned.tokensSaved < options.pruneMinSavings) return;
  run.replaceMessages(pruned.messages);
  run.setLayer("prune");
  setState(run, { prunedCount: pruned.prunedIndices.length, prunedTokens: pruned.tokensSaved, splitLastTurn: false });
}

/**
 * Layers 2 and 3: the cut for the context as it is after pruning, or none, saying why (then the
 * core returns the pruned working set when layer 1 ran, or reports a noop). A cut that would
 * compact nothing is not offered, so it never discards what layer 1 pruned.
 */
function selectLayer<T>(run: CompactionRun<T>, options: LayeredOptions): Cut | undefined {
  const ratio = run.contextTokens / run.usableWindow;
  const layer = chooseSummaryLayer(ratio, run.trigger, options);
  const at = `the context is at ${percent(ratio)} of the window`;
  if (layer === undefined) {
    run.explainNoCut(belowSummarizeThreshold(run, at, options));
    return undefined;
  }
  // What layer 2 keeps and the summary fit the budget, or, for a context over the run's target
  // (0.6 of the auto-compaction threshold), the target, as safeguard's cut: keeping up to the
  // budget at a small window brought the next compaction, and its cache miss, a few turns later.
  // Layer 3 recovers from far over the window (a smaller model, an overflow): it keeps the newest
  // turns that fit the budget beside its summary, where the target left it less than truncation.
  // Within the window it keeps to the target like layer 2: a context kept up to the budget is
  // over it again at the next step, each request shrunk at send time until the next compaction.
  const limit: KeepLimit = layer === "full" && run.overWindow ? { tokens: run.budget, withinTarget: false } : keepLimit(run);
  // A last turn layer 3 must split keeps its newest part within the target, like layer 2: the
  // turn goes on after the compaction, and a part kept up to the budget would leave its next
  // steps no room (each request shrunk at send time until the next compaction, a few steps later).
  const room: CutRoom = {
    budget: limit.tokens,
    splitBudget: layer === "full" ? keepLimit(run).tokens : limit.tokens,
    summaryTokens: options.summaryMaxTokens ?? run.summaryMaxTokens,
    plugin: PLUGIN_NAME,
  };
  const protectTokens = protectTokensOf(run, options.summarizeProtectTokens, room.summaryTokens);
  if (layer === "full") {
    const cut = fullLayerCut(run.view, protectTokens, room);
    if (cut === undefined) {
      run.explainNoCut(`${at}, but layer 3 found nothing to summarise besides the messages it keeps`);
      return undefined;
    }
    setState(run, { ...stateOf(run), splitLastTurn: cut.splitLastTurn });
    run.setLayer("full");
    warnWhenLowered(run, cut.firstKeptIndex, options.summarizeProtectTokens, room, limit);
    return { firstKeptIndex: cut.firstKeptIndex, layer, reason: `${at}, above fullThreshold ${percent(options.fullThreshold)}` };
  }
  const firstKeptIndex = summarizeLayerCut(run.view, protectTokens, room);
  if (firstKeptIndex === undefined) {
    run.explainNoCut(`${at}, but layer 2 found nothing to summarise besides the newest messages it keeps`);
    return undefined;
  }
  run.setLayer("summarize");
  warnWhenLowered(run, firstKeptIndex, options.summarizeProtectTokens, room, limit);
  const reason =
    ratio > options.summarizeThreshold
      ? `${at}, above summarizeThreshold ${percent(options.summarizeThreshold)}`
      : `manual compaction (${at}, below summarizeThreshold ${percent(options.summarizeThreshold)})`;
  return { firstKeptIndex, layer, reason };
}

/**
 * Writes the summary of a cut this plugin chose, or of another plugin's cut that nobody has
 * summarised yet; a summarizer failure propagates (the run fails, history untouched).
 */
async function summarizeLayer<T>(draft: SummaryDraft, run: CompactionRun<T>, options: LayeredOptions): Promise<SummaryDraft> {
  const cut = run.cut;
  if (cut === null || (cut.selectedBy !== PLUGIN_NAME && !isEmptyDraft(draft))) return draft;
  const maxTokens = options.summaryMaxTokens ?? run.summaryMaxTokens;
  // A split turn gets two summaries; together they stay within maxTokens.
  const historyTokens = cut.isSplitTurn ? Math.max(1, Math.floor((maxTokens * 2) / 3)) : maxTokens;
  const text = await summarizeCut(run, {
    maxTokens: historyTokens,
    turnPrefixMaxTokens: Math.max(1, maxTokens - historyTokens),
    chunkTokens: options.chunkTokens,
  });
  if (cut.selectedBy === PLUGIN_NAME && cut.layer === "full") run.warn(stateOf(run).splitLastTurn ? FULL_SPLIT_COMPACTION_WARNING : FULL_COMPACTION_WARNING);
  return { ...draft, text, kind: "summary" };
}

/**
 * How much of the newest messages layers 2 and 3 keep: `summarizeProtectTokens`, or, for a
 * context larger than the whole window (`run.overWindow`: a smaller model, an overflow), what the
 * run's target leaves beside the summary when that is more, as safeguard keeps: that compaction is
 * no regular one, and truncation to the window would keep more of what the agent uses next.
 */
function protectTokensOf<T>(run: CompactionRun<T>, setting: number, summaryTokens: number): number {
  return Math.max(setting, run.overWindowKeepTokens(summaryTokens));
}

/**
 * Warns, as safeguard does for its keepRecentTokens, when the cut keeps less than
 * `summarizeProtectTokens` would because the summary and the preserved messages leave less room
 * in the budget, or in the run's target for a context over it. Figures are in the run's counter,
 * as summarizeProtectTokens is.
 */
function warnWhenLowered<T>(run: CompactionRun<T>, firstKeptIndex: number, protectTokens: number, room: CutRoom, limit: KeepLimit): void {
  const allowance = keptRoom(run.view, { budget: room.budget, summaryTokens: room.summaryTokens });
  if (allowance >= protectTokens) return;
  if (firstKeptIndex <= findCutPoint(run.view, { keepRecentTokens: protectTokens }).firstKeptIndex) return;
  const within = limit.withinTarget
    ? `within the run's target (${room.budget} tokens, so the next compaction is many turns away) `
    : "";
  run.warn(
    `summarizeProtectTokens (${protectTokens}) was lowered to ${allowance} for this run, to leave room for the summary (${room.summaryTokens} tokens) and the preserved messages ${within}in the budget of ${run.budget} tokens.`,
  );
}

/** Why an automatic run below summarizeThreshold selects no cut. */
function belowSummarizeThreshold<T>(run: CompactionRun<T>, at: string, options: LayeredOptions): string {
  const below = `${at}, not above summarizeThreshold ${percent(options.summarizeThreshold)}`;
  if (!run.suffixOnly) return below;
  return `${below}; layer 1 (pruning) does not run: the host records only a summary and an unchanged suffix (suffixOnly)`;
}

function stateOf<T>(run: CompactionRun<T>): LayeredRunState {
  return (run.state.get(PLUGIN_NAME) as LayeredRunState | undefined) ?? { prunedCount: 0, prunedTokens: 0, splitLastTurn: false };
}

function setState<T>(run: CompactionRun<T>, state: LayeredRunState): void {
  run.state.set(PLUGIN_NAME, state);
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1).replace(/\.0$/, "")}%`;
}
