/**
 * Merging: a previous summary's items are kept, new ones added, duplicates dropped, work in
 * progress moved to done when the new messages show it done, and files recomputed (a file
 * both read and modified is listed as modified only).
 */
import {
  emptyState,
  type ExtraSection,
  PENDING_PREFIX,
  readSummary,
  RESPOND_PREFIX,
  SLOT_IDS,
  type SlotId,
  type SummaryState,
} from "@compaction/core";
import { CHATTER_OPENER } from "./cues.js";
import { type Extraction, RESOLVED_MARK } from "./extract.js";
import { ItemList, type ItemListOptions } from "./item-list.js";
import { significantWords } from "./keywords.js";

const PROSE: ItemListOptions = { repeat: "first", caseless: true };
const RECENT_PROSE: ItemListOptions = { repeat: "latest", caseless: true };
const EXACT: ItemListOptions = { repeat: "latest", caseless: false };

/** How repeats are handled per list: prose keeps its first place, paths and commands move to the newest. */
const LIST_OPTIONS: Readonly<Record<SlotId, ItemListOptions>> = {
  goal: PROSE,
  currentTask: PROSE,
  plan: { repeat: "first", caseless: false },
  constraints: PROSE,
  done: RECENT_PROSE,
  inProgress: PROSE,
  decisions: PROSE,
  filesRead: EXACT,
  filesModified: EXACT,
  commands: EXACT,
  failed: EXACT,
  identifiers: EXACT,
  nextSteps: PROSE,
};

/** Lists that describe "now": a newer non-empty list replaces the older one instead of joining it. */
const NEWEST_WINS: readonly SlotId[] = ["currentTask", "plan", "nextSteps"];

/** Share of an in-progress item's words that a new done item must contain to count as finishing it. */
const DONE_WORD_SHARE = 0.6;

/**
 * Combines two earlier summaries (say, `previousSummary` and a summary message among the
 * messages) into one: lists are unioned, the newer one's next steps win, and an unknown
 * section of the newer replaces the older's of the same heading.
 */
export function combineStates(older: SummaryState, newer: SummaryState): SummaryState {
  const slots = {} as Record<SlotId, readonly string[]>;
  for (const id of SLOT_IDS) slots[id] = union(id, older.slots[id], newer.slots[id]);
  for (const id of NEWEST_WINS) slots[id] = newer.slots[id].length > 0 ? newer.slots[id] : older.slots[id];
  return settle({ slots, extras: combineExtras(older.extras, newer.extras) });
}

/**
 * The state a history summary is rendered from: `previousSummary`, then each summary message
 * found among the messages (earlier compactions, oldest first), read and combined, with what
 * the messages say merged in.
 */
export function historyState(extraction: Extraction, previousSummary?: string): SummaryState {
  let previous = emptyState();
  const earlier = previousSummary === undefined ? [] : [previousSummary];
  for (const text of [...earlier, ...extraction.summaries]) previous = combineStates(previous, readSummary(text));
  return mergeExtraction(previous, extraction);
}

/** Merges what new messages say into the state of the previous summary. */
export function mergeExtraction(previous: SummaryState, extraction: Extraction): SummaryState {
  const prev = previous.slots;
  const goals = prev.goal.filter((goal) => !goal.startsWith(PENDING_PREFIX));
  const stillPending = extraction.hasAssistantReply ? [] : prev.goal.filter((goal) => goal.startsWith(PENDING_PREFIX));
  const finished = prev.inProgress.filter(doneEvidence(extraction));

  const slots: Record<SlotId, readonly string[]> = {
    goal: union(
      "goal",
      goals,
      goals.length === 0 ? extraction.firstRequests : [],
      stillPending,
      extraction.pendingAsks.map((ask) => PENDING_PREFIX + ask),
    ),
    currentTask: extraction.currentTask.length > 0 ? extraction.currentTask : prev.currentTask,
    plan: extraction.plan.length > 0 ? extraction.plan : prev.plan,
    constraints: union("constraints", prev.constraints, extraction.constraints),
    // Narration kept by summaries written before done items came from the tool calls is dropped.
    done: union("done", prev.done.filter((item) => !CHATTER_OPENER.test(item)), finished, extraction.done),
    inProgress: union(
      "inProgress",
      prev.inProgress.filter((item) => !finished.includes(item) && !CHATTER_OPENER.test(item)),
      extraction.inProgress,
    ),
    decisions: union("decisions", prev.decisions, extraction.decisions),
    filesRead: union("filesRead", prev.filesRead, extraction.filesRead),
    filesModified: union("filesModified", prev.filesModified, extraction.filesModified),
    commands: union("commands", prev.commands, extraction.commands),
    // A failure an earlier summary already showed got through is history, not an open error.
    failed: union("failed", prev.failed.filter((item) => !item.endsWith(RESOLVED_MARK)), extraction.failed),
    identifiers: union("identifiers", prev.identifiers, extraction.identifiers),
    nextSteps: union(
      "nextSteps",
      extraction.hasAssistantReply ? extraction.nextSteps : prev.nextSteps,
      extraction.pendingAsks.map((ask) => RESPOND_PREFIX + ask),
    ),
  };
  return settle({ slots, extras: previous.extras });
}

/**
 * Enforces the rules across lists: an item done is not also in progress, a file modified is
 * not also listed as read.
 */
function settle(state: SummaryState): SummaryState {
  const done = new ItemList(LIST_OPTIONS.done, state.slots.done);
  const modified = new ItemList(LIST_OPTIONS.filesModified, state.slots.filesModified);
  return {
    slots: {
      ...state.slots,
      inProgress: state.slots.inProgress.filter((item) => !done.has(item)),
      filesRead: state.slots.filesRead.filter((path) => !modified.has(path)),
    },
    extras: state.extras,
  };
}

/**
 * A test for "the new messages show this in-progress item done": the same item is now done, it
 * names a file now modified or a command now run successfully, or a new done item shares most
 * of its words.
 */
function doneEvidence(extraction: Extraction): (item: string) => boolean {
  const done = new ItemList(LIST_OPTIONS.done, extraction.done);
  const doneWordSets = extraction.done.map((item) => new Set(significantWords(item)));
  return (item) => {
    if (done.has(item)) return true;
    if (extraction.completedTargets.some((target) => item.includes(target))) return true;
    const words = significantWords(item);
    if (words.length < 2) return false;
    return doneWordSets.some((doneWords) => {
      let shared = 0;
      for (const word of words) if (doneWords.has(word)) shared++;
      return shared >= words.length * DONE_WORD_SHARE;
    });
  };
}

function union(slot: SlotId, ...lists: readonly (readonly string[])[]): string[] {
  const merged = new ItemList(LIST_OPTIONS[slot]);
  for (const list of lists) for (const item of list) merged.add(item);
  return merged.values();
}

function combineExtras(older: readonly ExtraSection[], newer: readonly ExtraSection[]): ExtraSection[] {
  const keyOf = (extra: ExtraSection) => `${extra.parent ?? ""}\u0000${extra.heading}`;
  const replaced = new Set(newer.map(keyOf));
  return [...older.filter((extra) => !replaced.has(keyOf(extra))), ...newer];
}
