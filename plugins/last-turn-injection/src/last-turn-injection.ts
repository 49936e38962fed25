/**
 * The last-turn-injection plugin: after the summary is written, it appends the last user message
 * before the cut and the assistant's reply to it, verbatim, so the agent never loses where it was.
 */
import {
  type CompactionPlugin,
  type CompactionRun,
  STAGE_AUGMENT,
  type SummaryDraft,
  type TokenCounter,
  createOptionsValidator,
  summaryRoom,
} from "@compaction/core";
import { extractLastTurn } from "./extract-last-turn.js";
import { formatLastTurnSection, removeLastTurnSection } from "./format-last-turn.js";
import { LAST_TURN_INJECTION_OPTIONS_SCHEMA, type LastTurnInjectionOptions } from "./options.js";

export const PLUGIN_NAME = "last-turn-injection";

/** The most of the run's summary allowance (`CompactionRun.summaryMaxTokens`) the section may take. */
export const SUMMARY_SHARE = 0.5;

const validateOptions = createOptionsValidator<LastTurnInjectionOptions>(PLUGIN_NAME, LAST_TURN_INJECTION_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/**
 * Creates the plugin. It taps `summarize` at STAGE_AUGMENT, after every base summary whatever
 * the plugin order, and appends to drafts of kind `summary` only (eviction notes and silent
 * drops are left as they are). Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options.
 */
export function lastTurnInjection(options?: Partial<LastTurnInjectionOptions>): CompactionPlugin {
  const resolved = validateOptions(options);
  return {
    name: PLUGIN_NAME,
    options: resolved as unknown as Readonly<Record<string, unknown>>,
    apply(compactor) {
      if (!resolved.lastTurnInjection) return;
      compactor.hooks.summarize.tap({ name: PLUGIN_NAME, stage: STAGE_AUGMENT }, (draft: SummaryDraft, run: CompactionRun<unknown>) =>
        appendLastTurn(draft, run, resolved.lastTurnMaxTokens, compactor.tokens.counter),
      );
    },
  };
}

/**
 * The draft with the last exchange before the run's cut appended (after a blank line), replacing
 * a stale section carried over from an earlier summary. Unchanged when the draft is not a
 * `summary`, or is empty (so the core still reports a missing summary rather than keeping only
 * the last exchange).
 */
export function appendLastTurn<T>(
  draft: SummaryDraft,
  run: CompactionRun<T>,
  maxTokens: number,
  counter: TokenCounter,
): SummaryDraft {
  if (draft.kind !== "summary") return draft;
  const base = removeLastTurnSection(draft.text).trimEnd();
  if (base.trim() === "") return draft;
  const cut = run.cut;
  if (cut === null) return draft;
  // Every message before the cut, in order: the compacted ones and any kept ahead of the summary
  // (a pinned user message), so replies are never paired with an earlier request.
  const turn = extractLastTurn(run.view.facts.slice(0, cut.firstKeptIndex));
  // The section must also fit what the kept messages and the summary leave of the budget, and
  // take at most half the run's summary allowance: at a small window (a quarter of a 3,000-token
  // budget) a long request quoted whole would fill the summary's room, where the summary's names
  // of the work done are what the agent goes on to use.
  const room = summaryRoom(run) - counter.count(`${base}\n\n`);
  const share = Math.floor(run.summaryMaxTokens * SUMMARY_SHARE);
  const cap = Math.min(maxTokens, room, share);
  const section = cap > 0 ? formatLastTurnSection(turn, cap, counter) : "";
  if (turn !== null && section === "") {
    run.warn(
      cap === maxTokens
        ? `lastTurnMaxTokens (${maxTokens}) is too small to hold even a truncated last exchange; it was left out.`
        : cap === room
          ? `The last exchange was left out: the budget has ${Math.max(0, room)} tokens left after the kept messages and the summary.`
          : `The last exchange was left out: half this run's summary allowance (${share} tokens) cannot hold even a truncated one.`,
    );
  }
  return { ...draft, text: section === "" ? base : `${base}\n\n${section}` };
}
