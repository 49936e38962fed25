/**
 * Turns item lists into the blocks a summary is rendered from: fixed headings in fixed order,
 * at most N items per section, items matching the focus first, and a rank on every item that
 * says what to drop first when the summary must shrink.
 */
import {
  clip,
  collapseWhitespace,
  type ExtraSection,
  FOCUS_TITLE,
  HISTORY_LAYOUT,
  type ItemStyle,
  type SectionLimits,
  SLOT_IDS,
  type SlotId,
  type SummaryBlock,
  type SummaryItem,
  type SummaryState,
  TURN_PREFIX_TITLES,
} from "@compaction/core";
import { CHECKING_COMMAND, LOOKING_COMMAND } from "./cues.js";
import type { Extraction } from "./extract.js";
import { ItemList } from "./item-list.js";

/** Ranks: the focus line outranks everything, focus matches outrank the rest of their section. */
const FOCUS_LINE_RANK = 1e9;
const FOCUS_MATCH_BOOST = 1e6;

/** @internal */
export interface RankPolicy {
  /** `newest`: later items are kept longer. `oldest`: earlier items are (goals, verbatim text). */
  readonly keep: "newest" | "oldest";
  readonly max: number;
  readonly matchesFocus: (text: string) => boolean;
}

/**
 * The blocks of a history summary, in the fixed layout, with unknown sections after their
 * parent. Empty sections are left out (a container heading such as `## Files` too when all its
 * subsections are empty): a summary never lists bare headings. What another section already
 * says is not repeated: commands that only looked or are named by a done item, modified files
 * named by a done item, and identifiers that occur in any other item.
 */
export function historyBlocks(
  state: SummaryState,
  focus: string | undefined,
  matchesFocus: (text: string) => boolean,
  limits: SectionLimits,
): SummaryBlock[] {
  const shown = shownItems(state, limits, matchesFocus);
  const blocks: SummaryBlock[] = focusBlocks(focus, limits);
  let openParent: string | undefined;
  let container: SummaryBlock | undefined;
  const flushExtrasOf = (parent: string | undefined) => {
    if (parent === undefined) return;
    for (const extra of state.extras) {
      if (extra.parent !== parent || extra.lines.length === 0) continue;
      if (container !== undefined) blocks.push(container);
      container = undefined;
      blocks.push(extraBlock(extra));
    }
  };
  for (const entry of HISTORY_LAYOUT) {
    if (entry.level === 2) {
      flushExtrasOf(openParent);
      openParent = entry.title;
      container = undefined;
    }
    const heading = `${"#".repeat(entry.level)} ${entry.title}`;
    if (entry.slot === undefined) {
      // Pushed once its first non-empty subsection (or kept section) is.
      container = { heading, style: entry.style, items: [], optional: false };
      continue;
    }
    const items = shown[entry.slot];
    const hasChildren =
      entry.level === 2 &&
      (state.extras.some((extra) => extra.parent === entry.title && extra.lines.length > 0) ||
        childSlots(entry.title).some((slot) => shown[slot].length > 0));
    if (items.length === 0 && !hasChildren) continue;
    if (container !== undefined) {
      blocks.push(container);
      container = undefined;
    }
    const policy: RankPolicy = {
      keep: entry.slot === "goal" || entry.slot === "plan" ? "oldest" : "newest",
      max: limitOf(entry.slot, limits),
      matchesFocus,
    };
    blocks.push(rankedBlock(heading, entry.style, items, policy));
  }
  flushExtrasOf(openParent);
  for (const extra of state.extras) if (extra.parent === undefined) blocks.push(extraBlock(extra));
  return blocks;
}

/** Output plumbing after a command (`2>&1 | tail -20`, `| grep error`): the same check, shown once. */
const OUTPUT_PLUMBING = /(?:\s+2>&1)?(?:\s*\|\s*(?:head|tail|grep|wc)\b[^|]*)+$|\s+2>&1\s*$/;

/**
 * Commands worth listing for whoever continues: checks (build, test, lint) and other tools'
 * calls, each once without its output plumbing. Commands that only looked are left out, and so
 * are commands that changed something: Done names those (commits by their message). Newest last.
 */
function shownCommands(commands: readonly string[]): string[] {
  const shown = new ItemList({ repeat: "latest", caseless: false });
  for (const command of commands) {
    if (LOOKING_COMMAND.test(command)) continue;
    if (CHECKING_COMMAND.test(command) || OTHER_TOOL_CALL.test(command)) shown.add(command.replace(OUTPUT_PLUMBING, ""));
  }
  return shown.values();
}

/** How the summary writes a call of a tool that is neither a file nor a shell tool: `name(arguments)`. */
const OTHER_TOOL_CALL = /^[\w.-]+\(/;

/** The slots of the `### ` subsections under the `## ` heading `title`. */
function childSlots(title: string): SlotId[] {
  const start = HISTORY_LAYOUT.findIndex((entry) => entry.level === 2 && entry.title === title);
  const slots: SlotId[] = [];
  for (let i = start + 1; start !== -1 && i < HISTORY_LAYOUT.length; i++) {
    const entry = HISTORY_LAYOUT[i];
    if (entry === undefined || entry.level === 2) break;
    if (entry.slot !== undefined) slots.push(entry.slot);
  }
  return slots;
}

/** Each list as the summary shows it (see historyBlocks for what is left out as said elsewhere). */
function shownItems(state: SummaryState, limits: SectionLimits, matchesFocus: (text: string) => boolean): Record<SlotId, readonly string[]> {
  const { slots } = state;
  // Only done items the section has room for name a file or command for the other sections.
  const doneText = slots.done.slice(-limits.maxItemsPerSection).join("\n");
  const named = (text: string) => doneText.includes(`\`${text}\``);
  const shown: Record<SlotId, readonly string[]> = {
    ...slots,
    filesModified: slots.filesModified.filter((path) => !named(path)),
    commands: shownCommands(slots.commands),
  };
  const files = new Set([...slots.filesRead, ...slots.filesModified]);
  const elsewhere = SLOT_IDS.filter((id) => id !== "identifiers")
    .map((id) => shown[id].join("\n"))
    .join("\n");
  shown.identifiers = keepable(
    slots.identifiers,
    (identifier) => !files.has(identifier) && !elsewhere.includes(identifier),
    limits.maxIdentifiers,
    matchesFocus,
  );
  return shown;
}

/**
 * @internal The items of a newest-kept section that pass `shows`, in order, leaving out only
 * those its block could not keep anyway: `rankedBlock` keeps the newest `max` focus matches, then
 * the newest others up to `max`, so older passing items beyond `max` of each kind are dropped
 * without being tested. The block made of the result keeps the same items in the same order as
 * one made of every passing item. For identifiers, `shows` searches every other shown item's
 * text: hundreds of searches a summary when all are tested, about `max` this way.
 */
export function keepable(items: readonly string[], shows: (item: string) => boolean, max: number, matchesFocus: (text: string) => boolean): string[] {
  const kept: string[] = [];
  let focused = 0;
  let others = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as string;
    const isFocused = matchesFocus(item);
    if ((isFocused ? focused : others) >= max || !shows(item)) continue;
    if (isFocused) focused++;
    else others++;
    kept.push(item);
  }
  return kept.reverse();
}

/** The blocks of a turn-prefix summary: Original Request, Early Progress, Context for Suffix. */
export function turnPrefixBlocks(
  extraction: Extraction,
  focus: string | undefined,
  matchesFocus: (text: string) => boolean,
  limits: SectionLimits,
): SummaryBlock[] {
  const modified = new Set(extraction.filesModified);
  const readOnly = extraction.filesRead.filter((path) => !modified.has(path));
  const max = limits.maxItemsPerSection;
  // Least relevant first: what the suffix most needs (work in progress) is ranked highest.
  const context = [
    ...readOnly.map((path) => `Read: ${path}`),
    ...extraction.constraints,
    ...extraction.filesModified.map((path) => `Modified: ${path}`),
    ...extraction.failed.map((failure) => `Failed: ${failure}`),
    ...extraction.inProgress.map((item) => `In progress: ${item}`),
  ];
  return [
    ...focusBlocks(focus, limits),
    rankedBlock(`## ${TURN_PREFIX_TITLES.request}`, "text", extraction.firstRequests, {
      keep: "oldest",
      max,
      matchesFocus,
    }),
    rankedBlock(`## ${TURN_PREFIX_TITLES.progress}`, "bullet", [...extraction.done, ...extraction.decisions], {
      keep: "newest",
      max,
      matchesFocus,
    }),
    rankedBlock(`## ${TURN_PREFIX_TITLES.context}`, "bullet", context, {
      keep: "newest",
      max: max + limits.maxFilesPerList,
      matchesFocus,
    }),
    // The exact names the turn's work used (the files a sub-agent made, the functions it wrote):
    // what the kept part of the turn goes on to use, and cannot guess. Those another block names
    // are left out.
    ...identifiersBlock(extraction.identifiers, [...extraction.firstRequests, ...extraction.done, ...extraction.decisions, ...context].join("\n"), limits, matchesFocus),
  ];
}

/** The turn prefix's `## Identifiers` block, of the identifiers `shownText` does not already hold; none when none are left. */
function identifiersBlock(identifiers: readonly string[], shownText: string, limits: SectionLimits, matchesFocus: (text: string) => boolean): SummaryBlock[] {
  const shown = keepable(identifiers, (identifier) => !shownText.includes(identifier), limits.maxIdentifiers, matchesFocus);
  if (shown.length === 0) return [];
  const title = HISTORY_LAYOUT.find((entry) => entry.slot === "identifiers")?.title ?? "Identifiers";
  return [rankedBlock(`## ${title}`, "code", shown, { keep: "newest", max: limits.maxIdentifiers, matchesFocus })];
}

function focusBlocks(focus: string | undefined, limits: SectionLimits): SummaryBlock[] {
  const text = clip(collapseWhitespace(focus ?? ""), limits.maxItemChars);
  if (text.length === 0) return [];
  return [{ heading: `## ${FOCUS_TITLE}`, style: "text", items: [{ text, rank: FOCUS_LINE_RANK }], optional: false }];
}

function limitOf(slot: SlotId, limits: SectionLimits): number {
  if (slot === "filesRead" || slot === "filesModified") return limits.maxFilesPerList;
  if (slot === "identifiers") return limits.maxIdentifiers;
  return limits.maxItemsPerSection;
}

/**
 * @internal Ranks items (by age per the policy, focus matches boosted), keeps the `max` best, and
 * orders them focus matches first, then oldest first.
 */
export function rankedBlock(heading: string, style: ItemStyle, texts: readonly string[], policy: RankPolicy): SummaryBlock {
  const count = texts.length;
  const scored = texts.map((text, index) => {
    const focused = policy.matchesFocus(text);
    const age = policy.keep === "newest" ? index : count - index;
    return { text, index, focused, rank: age + (focused ? FOCUS_MATCH_BOOST : 0) };
  });
  const kept = [...scored].sort((a, b) => b.rank - a.rank).slice(0, Math.max(0, policy.max));
  kept.sort((a, b) => Number(b.focused) - Number(a.focused) || a.index - b.index);
  const items: SummaryItem[] = kept.map(({ text, rank }) => ({ text, rank }));
  return { heading, style, items, optional: false };
}

/** An unknown section of a previous summary: its lines verbatim, earlier lines kept longer. */
function extraBlock(extra: ExtraSection): SummaryBlock {
  const count = extra.lines.length;
  const items = extra.lines.map((text, index) => ({ text, rank: count - index }));
  return { heading: extra.heading, style: "verbatim", items, optional: true };
}
