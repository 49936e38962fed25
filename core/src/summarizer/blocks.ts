/**
 * Turns item lists into the blocks a summary is rendered from: fixed headings in fixed order,
 * at most N items per section, items matching the focus first, and a rank on every item that
 * says what to drop first when the summary must shrink.
 */
import type { Extraction } from "./extract.js";
import {
  type ExtraSection,
  FOCUS_TITLE,
  HISTORY_LAYOUT,
  type SlotId,
  type SummaryState,
  TURN_PREFIX_TITLES,
} from "./layout.js";
import type { ItemStyle, SummaryBlock, SummaryItem } from "./sections.js";
import { clip, collapseWhitespace } from "./text.js";

/** How many items each kind of section may hold. */
export interface SectionLimits {
  readonly maxItemsPerSection: number;
  readonly maxFilesPerList: number;
  readonly maxIdentifiers: number;
  readonly maxItemChars: number;
}

/** Ranks: the focus line outranks everything, focus matches outrank the rest of their section. */
const FOCUS_LINE_RANK = 1e9;
const FOCUS_MATCH_BOOST = 1e6;

interface RankPolicy {
  /** `newest`: later items are kept longer. `oldest`: earlier items are (goals, verbatim text). */
  readonly keep: "newest" | "oldest";
  readonly max: number;
  readonly matchesFocus: (text: string) => boolean;
}

/** The blocks of a history summary, in the fixed layout, with unknown sections after their parent. */
export function historyBlocks(
  state: SummaryState,
  focus: string | undefined,
  matchesFocus: (text: string) => boolean,
  limits: SectionLimits,
): SummaryBlock[] {
  const blocks: SummaryBlock[] = focusBlocks(focus, limits);
  const files = new Set([...state.slots.filesRead, ...state.slots.filesModified]);
  const flushExtrasOf = (parent: string | undefined) => {
    if (parent === undefined) return;
    for (const extra of state.extras) if (extra.parent === parent) blocks.push(extraBlock(extra));
  };
  let openParent: string | undefined;
  for (const entry of HISTORY_LAYOUT) {
    if (entry.level === 2) {
      flushExtrasOf(openParent);
      openParent = entry.title;
    }
    const heading = `${"#".repeat(entry.level)} ${entry.title}`;
    if (entry.slot === undefined) {
      blocks.push({ heading, style: entry.style, items: [], optional: false });
      continue;
    }
    let items = state.slots[entry.slot];
    if (entry.slot === "identifiers") items = items.filter((identifier) => !files.has(identifier));
    const policy: RankPolicy = {
      keep: entry.slot === "goal" ? "oldest" : "newest",
      max: limitOf(entry.slot, limits),
      matchesFocus,
    };
    blocks.push(rankedBlock(heading, entry.style, items, policy));
  }
  flushExtrasOf(openParent);
  for (const extra of state.extras) if (extra.parent === undefined) blocks.push(extraBlock(extra));
  return blocks;
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
  ];
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
 * Ranks items (by age per the policy, focus matches boosted), keeps the `max` best, and orders
 * them focus matches first, then oldest first.
 */
function rankedBlock(heading: string, style: ItemStyle, texts: readonly string[], policy: RankPolicy): SummaryBlock {
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
