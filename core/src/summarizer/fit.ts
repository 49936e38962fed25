/**
 * Fits a summary under a token cap. In order: drop the least relevant item of the largest
 * section (each keeps its best item), cut the longest items short with "…", drop sections' last
 * items, and finally, if even the headings do not fit, keep the longest prefix that fits. When
 * the cap leaves no item under the headings, the first section's best item is kept under its own
 * heading, or alone: a summary of headings only says nothing, and the core never writes one.
 * The result never exceeds the cap as the caller's counter counts it.
 */
import type { TokenCounter } from "../tokens/token-counter.js";
import { summaryHasContent } from "./has-content.js";
import { type SummaryBlock, type SummaryItem, renderBlocks, renderItem } from "./sections.js";
import { ELLIPSIS, clip, isHighSurrogate } from "./text.js";

/** Items are never cut shorter than this many characters (the shortest clip ItemList can match). */
const MIN_CLIP_CHARS = 24;
/** Attempts with a tighter target when the counter's total runs above the sum of line estimates. */
const MAX_ATTEMPTS = 6;

interface WorkItem {
  text: string;
  readonly rank: number;
  cost: number;
}

interface WorkBlock {
  readonly block: SummaryBlock;
  items: WorkItem[];
}

/**
 * Texts longer than this many characters per token of the cap (prose runs about 4) are first
 * sized line by line (the costs trimming needs anyway), so a text far over the cap is not also
 * counted whole.
 */
const LIKELY_OVER_CHARS_PER_TOKEN = 5;
/** Line estimates run within a few percent of the count; above the cap by this factor, the whole text cannot fit. */
const CLEARLY_OVER = 1.2;

/** Renders `blocks` within `maxTokens` as counted by `counter`. */
export function fitToBudget(blocks: readonly SummaryBlock[], maxTokens: number, counter: TokenCounter): string {
  const limit = Math.floor(maxTokens);
  if (limit <= 0) return "";
  const text = fitBlocks(blocks, limit, counter);
  if (summaryHasContent(text)) return text;
  for (const { block, item } of fallbackItems(blocks)) {
    const underHeading = longestFittingPrefix(renderBlocks([{ ...block, items: [item] }]), limit, counter);
    if (summaryHasContent(underHeading)) return underHeading;
    const alone = longestFittingPrefix(item.text.trim(), limit, counter);
    if (summaryHasContent(alone)) return alone;
  }
  return text;
}

/** Items tried when the cap leaves none under the headings: at most this many. */
const FALLBACK_ITEMS = 8;

/**
 * The items to keep when the cap leaves none under the headings, best first: the blocks in their
 * order (the order of importance: goal, current task, progress, ...), optional ones last, and in
 * each its items by rank (ranks compare items of one block only).
 */
function fallbackItems(blocks: readonly SummaryBlock[]): { block: SummaryBlock; item: SummaryItem }[] {
  const ordered = [...blocks.filter((block) => !block.optional), ...blocks.filter((block) => block.optional)];
  const out: { block: SummaryBlock; item: SummaryItem }[] = [];
  for (const block of ordered) {
    for (const item of [...block.items].sort((a, b) => b.rank - a.rank)) {
      out.push({ block, item });
      if (out.length === FALLBACK_ITEMS) return out;
    }
  }
  return out;
}

/** `fitToBudget`'s trimming, which may leave the headings alone when the cap is that small. */
function fitBlocks(blocks: readonly SummaryBlock[], limit: number, counter: TokenCounter): string {
  const full = renderBlocks(blocks);
  // Sized line by line first when long: the first trim reuses those costs.
  let sized = full.length > limit * LIKELY_OVER_CHARS_PER_TOKEN ? workBlocks(blocks, counter) : undefined;
  const clearlyOver = sized !== undefined && skeletonTokens(sized, counter) + sumCosts(sized) > limit * CLEARLY_OVER;
  if (!clearlyOver && counter.count(full) <= limit) return full;

  let target = limit;
  let text = full;
  for (let attempt = 0; attempt < MAX_ATTEMPTS && target > 0; attempt++) {
    text = renderBlocks(trim(sized ?? workBlocks(blocks, counter), target, counter));
    sized = undefined;
    const tokens = counter.count(text);
    if (tokens <= limit) return text;
    target = Math.min(target - 1, Math.floor((target * limit) / tokens));
  }
  return longestFittingPrefix(text, limit, counter);
}

/** Each block's items with the tokens of their rendered line. */
function workBlocks(blocks: readonly SummaryBlock[], counter: TokenCounter): WorkBlock[] {
  return blocks.map((block) => ({
    block,
    items: block.items.map((item, position) => ({
      text: item.text,
      rank: item.rank,
      cost: lineCost(block, item.text, position, counter),
    })),
  }));
}

/** Tokens of the headings alone: optional blocks still count while they have items. */
function skeletonTokens(work: readonly WorkBlock[], counter: TokenCounter): number {
  return counter.count(
    renderBlocks(
      work
        .filter(({ block, items }) => !block.optional || items.length > 0)
        .map(({ block }) => ({ ...block, items: [], optional: false })),
    ),
  );
}

/** Trims `work` (changing it) until the estimated size (skeleton plus per-line costs) is at most `target`. */
function trim(work: WorkBlock[], target: number, counter: TokenCounter): SummaryBlock[] {
  const skeleton = () => skeletonTokens(work, counter);
  let fixed = skeleton();
  let total = fixed + sumCosts(work);

  // 1. The least relevant item of the largest section, while every section keeps one item.
  while (total > target) {
    const largest = largestBlock(work, 2);
    if (largest === undefined) break;
    total -= removeLowest(largest);
  }
  // 2. Cut the longest items short.
  while (total > target) {
    const longest = longestClippable(work);
    if (longest === undefined) break;
    const { owner, item } = longest;
    const before = item.cost;
    item.text = clip(item.text, Math.max(MIN_CLIP_CHARS, Math.floor(item.text.length / 2)));
    item.cost = lineCost(owner.block, item.text, owner.items.indexOf(item), counter);
    total += item.cost - before;
  }
  // 3. The remaining items, largest sections first; empty optional sections lose their heading.
  while (total > target) {
    const largest = largestBlock(work, 1);
    if (largest === undefined) break;
    total -= removeLowest(largest);
    if (largest.items.length === 0 && largest.block.optional) {
      const before = fixed;
      fixed = skeleton();
      total += fixed - before;
    }
  }
  return work.map(({ block, items }) => ({ ...block, items: items.map(({ text, rank }): SummaryItem => ({ text, rank })) }));
}

/**
 * Tokens of one rendered item line with its line break, counted together: what the line adds to
 * the rendered text, and with a counter that adds up at line starts the very part it counts the
 * text in, so counting the text after sizing its lines encodes none of them again.
 */
function lineCost(block: SummaryBlock, text: string, position: number, counter: TokenCounter): number {
  return counter.count(`${renderItem(block.style, text, position)}\n`);
}

function sumCosts(work: readonly WorkBlock[]): number {
  let sum = 0;
  for (const { items } of work) for (const item of items) sum += item.cost;
  return sum;
}

/** The block with the most item tokens among those with at least `minItems` items. */
function largestBlock(work: readonly WorkBlock[], minItems: number): WorkBlock | undefined {
  let best: WorkBlock | undefined;
  let bestCost = -1;
  for (const entry of work) {
    if (entry.items.length < minItems) continue;
    let cost = 0;
    for (const item of entry.items) cost += item.cost;
    if (cost > bestCost) {
      best = entry;
      bestCost = cost;
    }
  }
  return best;
}

/** Removes the lowest-ranked item (the first one on ties) and returns its cost. */
function removeLowest(entry: WorkBlock): number {
  let lowest = 0;
  for (let i = 1; i < entry.items.length; i++) {
    if ((entry.items[i]?.rank ?? 0) < (entry.items[lowest]?.rank ?? 0)) lowest = i;
  }
  const [removed] = entry.items.splice(lowest, 1);
  return removed?.cost ?? 0;
}

function longestClippable(work: readonly WorkBlock[]): { owner: WorkBlock; item: WorkItem } | undefined {
  let found: { owner: WorkBlock; item: WorkItem } | undefined;
  for (const owner of work) {
    for (const item of owner.items) {
      if (item.text.length <= MIN_CLIP_CHARS + ELLIPSIS.length) continue;
      if (found === undefined || item.cost > found.item.cost) found = { owner, item };
    }
  }
  return found;
}

/** The longest prefix of `text` (whole lines, then part of the next line) within `limit` tokens. */
function longestFittingPrefix(text: string, limit: number, counter: TokenCounter): string {
  const lines = text.split("\n");
  let low = 0;
  let high = lines.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (counter.count(lines.slice(0, mid).join("\n")) <= limit) low = mid;
    else high = mid - 1;
  }
  let kept = lines.slice(0, low).join("\n");
  const next = lines[low];
  if (next !== undefined) {
    const joiner = low > 0 ? "\n" : "";
    let lowChars = 0;
    let highChars = next.length;
    while (lowChars < highChars) {
      const mid = Math.ceil((lowChars + highChars) / 2);
      if (counter.count(kept + joiner + safeSlice(next, mid)) <= limit) lowChars = mid;
      else highChars = mid - 1;
    }
    if (lowChars > 0) kept += joiner + safeSlice(next, lowChars);
  }
  while (kept.length > 0 && counter.count(kept) > limit) kept = safeSlice(kept, kept.length - 1);
  return kept;
}

/** The first `length` UTF-16 units of `text`, one fewer if that would split a surrogate pair. */
function safeSlice(text: string, length: number): string {
  const cut = text.slice(0, length);
  return isHighSurrogate(cut.charCodeAt(cut.length - 1)) ? cut.slice(0, -1) : cut;
}
