import {
  alwaysKept,
  type CompactionPlugin,
  type CompactionRun,
  type Compactor,
  STAGE_STRATEGY,
  type SummaryDraft,
  createOptionsValidator,
  summarizeCut,
  isEmptyDraft,
  type TokenCounter,
} from "@compaction/core";
import { SLIDING_WINDOW_OPTIONS_SCHEMA, type SlidingWindowInput, type SlidingWindowOptions } from "./options.js";
import { keepTokensFor, selectWindowCut, summaryTokens } from "./select-cut.js";
import { withSummaryPrefix, withoutSummaryPrefix } from "./summary-prefix.js";

export const PLUGIN_NAME = "sliding-window";

const validateOptions = createOptionsValidator<SlidingWindowOptions>(PLUGIN_NAME, SLIDING_WINDOW_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/**
 * The options with every default filled in. Throws COMPACTION_PLUGIN_OPTIONS_INVALID naming the
 * plugin and each bad option.
 */
export function resolveSlidingWindowOptions(options?: SlidingWindowInput): SlidingWindowOptions {
  return validateOptions(options);
}

/**
 * The sliding-window strategy: keep the system prompt and the newest messages that fit
 * `keepRatio` of the context window (always at least the last user message and what follows
 * it), and summarise everything in between into one message that begins with `summaryPrefix`.
 *
 * ```ts
 * new Compactor({ adapter, plugins: [slidingWindow({ keepRatio: 0.4 })] });
 * ```
 */
export function slidingWindow(options?: SlidingWindowInput): CompactionPlugin {
  const config = resolveSlidingWindowOptions(options);
  return {
    name: PLUGIN_NAME,
    options: config as unknown as Readonly<Record<string, unknown>>,
    apply(compactor: Compactor<unknown>) {
      compactor.hooks.selectCut.tap({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (run) => selectCut(run, config));
      compactor.hooks.summarize.tapPromise({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (draft, run) =>
        summarize(draft, run, config, compactor.tokens.counter),
      );
    },
  };
}

function selectCut(run: CompactionRun<unknown>, config: SlidingWindowOptions) {
  const room = run.budget - alwaysKept(run.view).tokens;
  // keepRatio is a share of the usable window (the window, or less when the reply's reserve takes
  // over a tenth of it), so of messages as the provider counts them: the cut keeps that many of the
  // provider's tokens, in our count at the calibrated ratio (`run.messageRatio`). At the preset's
  // 40% beside its 80% threshold, the next compaction is half the usable window away.
  // A context larger than the whole window (a smaller model, an overflow) keeps the newest
  // messages up to the run's target when that is more: no regular compaction, and truncation to
  // the window would keep more of what the agent uses next (`run.overWindow`).
  const summaryRoom = (config.summaryMaxTokens ?? run.summaryMaxTokens) + run.summaryOverheadTokens;
  const shareTokens = keepTokensFor(run.usableWindow, room, config.keepRatio, run.messageRatio);
  const overWindowTokens = run.overWindowKeepTokens(summaryRoom);
  const keepTokens = Math.max(shareTokens, overWindowTokens);
  const share =
    overWindowTokens > shareTokens
      ? "the run's target: the context was larger than the window"
      : `${config.keepRatio} of the window${run.messageRatio > 1 ? ", in the provider's measure" : ""}`;
  // Keeping the newest turn whole beside the summary must fit the room: the new summary takes
  // in the earlier one, so at least its size is needed. When it does not fit, the turn is still
  // kept from its request on (the newest user message is never compacted) and the core fits it:
  // it splits a turn larger than the budget (fit-budget.ts, rules 1 and 2), else shrinks it.
  const maxKept = room - summaryTokens(run.view);
  const cut = selectWindowCut(run.view, keepTokens, maxKept);
  if (!cut) return undefined;
  if (cut.overRoom) {
    run.warn(
      `The newest turn needs ${cut.keptTokens} tokens, more than the ${Math.max(0, maxKept)} tokens the budget (${run.budget}) leaves beside the summary; it is kept from its user message, and the core fits it to the budget: a turn larger than the budget is split (its user message kept ahead of the summary, its early part summarised), else its largest parts are shrunk to head and tail.`,
    );
  } else if (cut.overShare) {
    run.warn(
      `The newest turn needs ${cut.keptTokens} tokens, more than the ${keepTokens} tokens kept verbatim (keepRatio ${config.keepRatio}${run.messageRatio > 1 ? " of the window, in the provider's measure" : ""}); it is kept whole from its user message.`,
    );
  }
  return {
    firstKeptIndex: cut.firstKeptIndex,
    layer: "summarize",
    reason: cut.overRoom
      ? `kept the newest turn whole (${cut.keptTokens} tokens, more than the budget leaves; the core shrinks it)`
      : cut.overShare
        ? `kept the newest turn whole (${cut.keptTokens} tokens, more than ${keepTokens})`
        : `kept the newest messages within ${keepTokens} tokens (${share})`,
  };
}

/**
 * Writes the summary for a cut this plugin selected, or for another plugin's cut that nobody
 * has summarised yet; otherwise passes the draft on.
 */
async function summarize(
  draft: SummaryDraft,
  run: CompactionRun<unknown>,
  config: SlidingWindowOptions,
  counter: TokenCounter,
): Promise<SummaryDraft> {
  if (!run.cut || (run.cut.selectedBy !== PLUGIN_NAME && !isEmptyDraft(draft))) return draft;
  if (run.previousSummary !== undefined) run.setPreviousSummary(withoutSummaryPrefix(run.previousSummary, config.summaryPrefix));
  const summary = await summarizeCut(run, {
    ...(config.summaryMaxTokens !== null ? { maxTokens: config.summaryMaxTokens } : {}),
    chunkTokens: config.chunkTokens,
    // The prefix is added after summarising: keep its cost out of the summary's room.
    reserveTokens: counter.count(`${config.summaryPrefix}\n\n`),
  });
  // An empty summary stays empty, so the core fails the run instead of dropping history silently.
  return { kind: "summary", text: withSummaryPrefix(summary, config.summaryPrefix) };
}

export default slidingWindow;
