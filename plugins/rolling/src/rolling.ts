import {
  type CompactionPlugin,
  type CompactionRun,
  type Compactor,
  type Cut,
  checkCut,
  createOptionsValidator,
  findCutPoint,
  type MessageFacts,
  STAGE_STRATEGY,
  type SummaryDraft,
  summarizeCut,
  isEmptyDraft,
} from "@compaction/core";
import { evictedNames, formatEvictionNote, noteNameLimits, type NoteNameLimits, timestampRange } from "./eviction-note.js";
import { type RollingOptions, type RollingOptionsInput, ROLLING_OPTIONS_SCHEMA } from "./options.js";
import { planEviction } from "./plan-eviction.js";

export const PLUGIN_NAME = "rolling";

const validateOptions = createOptionsValidator<RollingOptions>(PLUGIN_NAME, ROLLING_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/** What `selectCut` decided, for `summarize` (kept in `run.state`). */
type Mode = "evict" | "fallback";

/** The longest ISO time a Date can print, so a note's reserve covers any real timestamp. */
const LONGEST_ISO_TIME = new Date(8.64e15).toISOString();

/**
 * Rolling compaction: evict the oldest messages (no model call) until the context is at or
 * under `targetUtilization` of the window, and leave one eviction note pointing at the recall
 * tool. Without recall it falls back to a safeguard summary and warns, since evicting what
 * cannot be searched is amnesia.
 */
export function rolling(options?: RollingOptionsInput): CompactionPlugin {
  const settings = validateOptions(options);
  return {
    name: PLUGIN_NAME,
    options: settings as unknown as Readonly<Record<string, unknown>>,
    apply(compactor) {
      compactor.hooks.selectCut.tap({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (run) =>
        selectCut(run, compactor, settings),
      );
      compactor.hooks.summarize.tapPromise({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (draft, run) =>
        summarize(draft, run, compactor, settings),
      );
    },
  };
}

/**
 * The rolling target, in the provider's measure: a share of the usable window (the window, or less
 * when the reply's reserve takes over a tenth of it), never above the budget (window minus
 * reserve; `run.budget` is it as our count). It is a low-water mark: the rolling preset sets it at
 * half the window, well under its 90% threshold, so each roll (a miss of the provider's prompt
 * cache for the whole request) frees room for many turns.
 */
function targetTokens<T>(run: CompactionRun<T>, settings: RollingOptions): number {
  return Math.min(Math.floor(run.usableWindow * settings.targetUtilization), run.providerTokens(run.budget));
}

/** Where the target came from, for reasons and warnings (the host picks the window, and the same transcript rolls in one and not in another). */
function targetOrigin<T>(run: CompactionRun<T>, settings: RollingOptions, target: number): string {
  if (target < Math.floor(run.usableWindow * settings.targetUtilization)) return `the ${run.contextWindow}-token window less the reserve for the reply`;
  const usable = run.usableWindow < run.contextWindow ? ` (usable: ${Math.floor(run.usableWindow)}, as the reserve for the reply takes over a tenth of it)` : "";
  return `${Math.round(settings.targetUtilization * 100)}% of the ${run.contextWindow}-token window${usable}`;
}

/** How many names a note of this run lists (`noteNameLimits`, for the run's target in our count). */
function noteNameLimitsOf<T>(run: CompactionRun<T>, settings: RollingOptions): NoteNameLimits {
  return noteNameLimits(run.countedTokens(targetTokens(run, settings)));
}

/** Recall is checked at compaction time: plugin order varies, and a recall plugin may come later. */
function hasRecall<T>(compactor: Compactor<T>, settings: RollingOptions): boolean {
  return settings.recall === "auto" ? compactor.provides(settings.recallTool) : settings.recall;
}

function selectCut<T>(run: CompactionRun<T>, compactor: Compactor<T>, settings: RollingOptions): Cut | undefined {
  const target = targetTokens(run, settings);
  if (!hasRecall(compactor, settings)) return fallbackCut(run, settings, target);

  // The target is for the context as the provider counts it (a system prompt and tools no
  // message shows, another tokenizer): plan in our count of the messages.
  const planFor = (noteTokens: number) => planEviction(run.view, { targetTokens: run.countedTokens(target), minKeepMessages: settings.minKeepMessages, noteTokens });
  let noteTokens = settings.evictionNote ? noteTokensFor(run, compactor, settings, run.view.facts) : 0;
  let plan = planFor(noteTokens);
  // The names of every message stood in for those of the messages the plan evicts (the newest of
  // a longer list, within the same room); when the plan's own note is larger, plan with it.
  for (let again = 0; settings.evictionNote && again < 2 && plan.evictedIndices.length > 0; again++) {
    const own = noteTokensFor(run, compactor, settings, plan.evictedIndices.map((i) => run.view.facts[i] as MessageFacts));
    if (own <= noteTokens) break;
    noteTokens = own;
    plan = planFor(noteTokens);
  }
  const limits = `minKeepMessages (${settings.minKeepMessages}), the system prompt, pinned messages and their tool partners are never evicted`;
  if (plan.evictedIndices.length === 0) {
    if (!plan.targetMet) {
      run.warn(
        `The context holds ${run.providerTokens(plan.keptTokens)} tokens${run.providerRatio > 1 ? " as the provider counts them" : ""}, over the target of ${target}, but nothing can be evicted: ${limits}.`,
      );
    } else {
      // Say which window the target came from: the same transcript rolls in a 200,000-token
      // window and not in a 1,000,000-token one, and the host picks the window.
      run.explainNoCut(
        `the context holds about ${run.providerTokens(plan.keptTokens)} tokens, already within its target of ${target} (${targetOrigin(run, settings, target)}), so nothing is evicted`,
      );
    }
    return undefined;
  }
  if (plan.keptTokens > run.budget) {
    run.warn(
      `Evicting cannot bring the context within the budget of ${run.budget} tokens: the messages that must stay hold ${plan.keptTokens} tokens (${limits}). Lower minKeepMessages or unpin messages.`,
    );
    return undefined;
  }
  if (!plan.targetMet) {
    run.warn(
      `Evicted as much as allowed, but about ${run.providerTokens(plan.keptTokens + noteTokens)} tokens remain (note included${run.providerRatio > 1 ? ", as the provider counts them" : ""}), over the target of ${target}: ${limits}.`,
    );
  }
  run.state.set(PLUGIN_NAME, "evict" satisfies Mode);
  return {
    firstKeptIndex: plan.firstKeptIndex,
    layer: "evict",
    reason: `evict the ${plan.evictedIndices.length} oldest messages (${plan.evictedTokens} tokens) to reach ${target} tokens (${targetOrigin(run, settings, target)})`,
  };
}

/**
 * Tokens of the note for evicting `facts`, as long as this run's could be: the message count and
 * tokens of the whole working set and the longest timestamps stand in for the evicted ones'.
 */
function noteTokensFor<T>(run: CompactionRun<T>, compactor: Compactor<T>, settings: RollingOptions, facts: readonly MessageFacts[]): number {
  let total = 0;
  for (const t of run.view.tokens) total += t;
  const text = formatEvictionNote({
    count: run.view.facts.length,
    tokens: total,
    firstTimestamp: LONGEST_ISO_TIME,
    lastTimestamp: LONGEST_ISO_TIME,
    recallTool: settings.recallTool,
    names: evictedNames(facts, noteNameLimitsOf(run, settings)),
  });
  return run.tokensOf(compactor.adapter.createNote(text));
}

/** Without recall: cut as safeguard does, keeping at most keepRecentTokens (and no more than the target). */
function fallbackCut<T>(run: CompactionRun<T>, settings: RollingOptions, target: number): Cut | undefined {
  const why =
    settings.recall === false
      ? "recall is turned off (recall: false)"
      : `no recall/memory search is configured for this agent (no plugin provides '${settings.recallTool}')`;
  run.warn(
    `${why}: rolling fell back to a safeguard summary instead of evicting, since evicted messages could not be searched. Add a recall plugin, or set recall: true if the host offers '${settings.recallTool}' itself.`,
  );
  // keepRecentTokens is a size of messages as the provider counts them (at the calibrated ratio);
  // the target is of the whole context (the run's ratio, which holds the system prompt and tools).
  const keepRecentTokens = Math.max(0, Math.min(run.countedMessageTokens(settings.keepRecentTokens), run.countedTokens(target)));
  const keepProvider = Math.min(settings.keepRecentTokens, target);
  const cut = findCutPoint(run.view, { keepRecentTokens, minKeepMessages: settings.minKeepMessages });
  if (cut.firstKeptIndex === 0) return undefined;
  const checked = checkCut(run.view, cut, { plugin: PLUGIN_NAME, budget: Number.POSITIVE_INFINITY });
  if (checked.keptTokens > run.budget) {
    run.warn(
      `The safeguard fallback cannot bring the context within the budget of ${run.budget} tokens: the messages that must stay hold ${checked.keptTokens} tokens. Lower minKeepMessages or unpin messages.`,
    );
    return undefined;
  }
  run.state.set(PLUGIN_NAME, "fallback" satisfies Mode);
  return {
    firstKeptIndex: cut.firstKeptIndex,
    layer: "summarize",
    reason: `no recall configured: summarise all but the newest ${keepProvider} tokens${run.messageRatio > 1 ? " as the provider counts them" : ""}, as safeguard does`,
  };
}

/**
 * The note for rolling's own cut (or the fallback summary). Another plugin's cut that nobody has
 * summarised yet is handled the same way: a note when recall is there, else a summary.
 */
async function summarize<T>(
  draft: SummaryDraft,
  run: CompactionRun<T>,
  compactor: Compactor<T>,
  settings: RollingOptions,
): Promise<SummaryDraft> {
  const cut = run.cut;
  if (!cut) return draft;
  const own = cut.selectedBy === PLUGIN_NAME;
  if (!own && !isEmptyDraft(draft)) return draft;
  const mode = own ? (run.state.get(PLUGIN_NAME) as Mode | undefined) : hasRecall(compactor, settings) ? "evict" : "fallback";
  if (mode === undefined) return draft;
  if (!own && mode === "fallback") {
    run.warn(`no plugin provides '${settings.recallTool}', so the messages cut by '${cut.selectedBy}' were summarised, not evicted.`);
  }
  if (mode === "fallback") return { text: await summarizeCut(run), kind: "summary" };
  if (!settings.evictionNote) return { text: "", kind: "none" };
  const evicted = cut.compactedIndices.map((i) => run.view.facts[i] as MessageFacts);
  const range = timestampRange(evicted);
  const text = formatEvictionNote({
    count: cut.compactedIndices.length,
    tokens: cut.compactedTokens,
    firstTimestamp: range.first,
    lastTimestamp: range.last,
    recallTool: settings.recallTool,
    names: evictedNames(evicted, noteNameLimitsOf(run, settings)),
  });
  return { text, kind: "note" };
}
