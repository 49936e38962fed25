/**
 * The plan an agent needs to continue: the latest plan or agreed structure written in a message
 * (a tree or other fenced block, a numbered list, a checklist, a list introduced as a plan),
 * kept verbatim, and the open items of a plan file the assistant wrote (its content followed
 * through later edits). Deterministic and linear in the size of the texts.
 */
import { clip, collapseWhitespace } from "@compaction/core";

/** Most lines of a plan kept verbatim; longer plans end with a line saying how many were left out. */
export const MAX_PLAN_LINES = 40;
/** Most open items of a plan file's next section, and most later open sections named. */
const MAX_OPEN_ITEMS = 12;
const MAX_LATER_SECTIONS = 8;
/** Longest line of a plan, in characters. */
const MAX_PLAN_LINE_CHARS = 200;

const FENCE = /^\s*(?:```|~~~)/;
const TREE_GLYPH = /[├└│┬┼]|^\s*[|`]--/m;
const NUMBERED = /^\s{0,3}\d{1,3}[.)]\s+\S/;
const CHECKBOX = /^\s*[-*+]\s+\[[ xX]\]\s+\S/;
const OPEN_CHECKBOX = /^\s*[-*+]\s+\[ \]\s+(.+)$/;
const DONE_CHECKBOX = /^\s*[-*+]\s+\[[xX]\]\s+/;
const BULLET = /^\s{0,3}[-*+]\s+\S/;
const CONTINUATION = /^\s{2,}\S/;
const MARKDOWN_HEADING = /^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$/;
/** A line that introduces a list as a plan ("Next steps:", "Proposed structure:", "Plan"). */
const PLAN_LEAD_IN = /\b(?:plan|next steps?|steps|to-?dos?|proposed|proposal|structure|layout|remaining|checklist|roadmap|tasks?)\b/i;
/** File names that hold a plan. */
const PLAN_FILE_NAME = /(?:^|[/\\])[^/\\]*(?:plan|todo|tasks?|roadmap|refactor|checklist|progress|milestones?)[^/\\]*\.(?:md|markdown|txt)$/i;
const MARKDOWN_FILE = /\.(?:md|markdown|txt)$/i;
/** Fewest checklist items that make any markdown file a plan file. */
const MIN_FILE_CHECKBOXES = 3;

/**
 * The last plan in `text`, verbatim (markdown headings turned into bold lines, so a summary
 * read back keeps its sections), or undefined when it holds none. A tree in a fenced block and
 * a checklist always count; a numbered list of three or more items counts when `anyList` is
 * set (the newest reply: what it lists is what comes next) or a plan-like line introduces it.
 */
export function findPlan(text: string, anyList: boolean): string | undefined {
  const lines = text.split("\n");
  let found: string[] | undefined;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (FENCE.test(line)) {
      const start = i;
      i++;
      while (i < lines.length && !FENCE.test(lines[i] ?? "")) i++;
      const block = lines.slice(start, Math.min(i + 1, lines.length));
      if (TREE_GLYPH.test(block.join("\n"))) found = block;
      i++;
      continue;
    }
    if (NUMBERED.test(line) || CHECKBOX.test(line) || BULLET.test(line)) {
      const start = i;
      let numbered = 0;
      let checkboxes = 0;
      let bullets = 0;
      while (i < lines.length) {
        const current = lines[i] ?? "";
        if (NUMBERED.test(current)) numbered++;
        else if (CHECKBOX.test(current)) checkboxes++;
        else if (BULLET.test(current)) bullets++;
        else if (!CONTINUATION.test(current)) break;
        i++;
      }
      const leadIn = nearestTextLine(lines, start);
      const introduced = PLAN_LEAD_IN.test(leadIn);
      const isPlan = checkboxes >= 2 || (numbered >= 3 && anyList) || (bullets + numbered >= 2 && introduced);
      if (isPlan) found = introduced ? [leadIn, ...lines.slice(start, i)] : lines.slice(start, i);
      continue;
    }
    i++;
  }
  return found === undefined ? undefined : verbatim(found);
}

/** A plan file's open work, or undefined when `path` and `content` are not a plan file. */
export function planFileSummary(path: string, content: string): string | undefined {
  if (!MARKDOWN_FILE.test(path)) return undefined;
  const lines = content.split("\n");
  let open = 0;
  let done = 0;
  for (const line of lines) {
    if (OPEN_CHECKBOX.test(line)) open++;
    else if (DONE_CHECKBOX.test(line)) done++;
  }
  if (open + done === 0 || (!PLAN_FILE_NAME.test(path) && open + done < MIN_FILE_CHECKBOXES)) return undefined;
  const head = `Plan file \`${path}\`: ${done} of ${open + done} items checked.`;
  if (open === 0) return head;

  // The section of the first open item is the next piece of work; later sections are named only.
  const sections: { heading: string; open: string[] }[] = [];
  let heading = "";
  let inFence = false;
  for (const line of lines) {
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    const headingMatch = MARKDOWN_HEADING.exec(line);
    if (headingMatch !== null) {
      heading = headingMatch[2] ?? "";
      continue;
    }
    const item = OPEN_CHECKBOX.exec(line);
    if (item === null) continue;
    const last = sections[sections.length - 1];
    if (last !== undefined && last.heading === heading) last.open.push(item[1] ?? "");
    else sections.push({ heading, open: [item[1] ?? ""] });
  }
  const [next, ...later] = sections;
  if (next === undefined) return head;
  const out = [head, next.heading === "" ? "Next open items:" : `Next: **${next.heading}**`];
  for (const item of next.open.slice(0, MAX_OPEN_ITEMS)) out.push(`- [ ] ${clip(collapseWhitespace(item), MAX_PLAN_LINE_CHARS)}`);
  if (next.open.length > MAX_OPEN_ITEMS) out.push(`- … ${next.open.length - MAX_OPEN_ITEMS} more open items`);
  const named = later.filter((section) => section.heading !== "").map((section) => `${section.heading} (${section.open.length} open)`);
  if (named.length > 0) {
    const shown = named.slice(0, MAX_LATER_SECTIONS).join("; ");
    const more = named.length > MAX_LATER_SECTIONS ? `; … ${named.length - MAX_LATER_SECTIONS} more` : "";
    out.push(`Later: ${clip(shown, MAX_PLAN_LINE_CHARS * 2)}${more}`);
  }
  return out.join("\n");
}

/**
 * Follows the content of files the assistant wrote through its later edits, so a plan file's
 * checkboxes are read as they are now. Edits whose old text is not found leave the content as
 * it was (the edit failed or changed text this tracker never saw).
 */
export class WrittenFiles {
  readonly #contents = new Map<string, string>();

  write(path: string, content: string): void {
    this.#contents.set(path, content);
  }

  edit(path: string, oldText: string, newText: string): boolean {
    const content = this.#contents.get(path);
    if (content === undefined || oldText === "") return false;
    const at = content.indexOf(oldText);
    if (at === -1) return false;
    this.#contents.set(path, content.slice(0, at) + newText + content.slice(at + oldText.length));
    return true;
  }

  has(path: string): boolean {
    return this.#contents.has(path);
  }

  content(path: string): string | undefined {
    return this.#contents.get(path);
  }
}

function nearestTextLine(lines: readonly string[], before: number): string {
  for (let j = before - 1; j >= 0 && j >= before - 2; j--) {
    const line = (lines[j] ?? "").trim();
    if (line !== "") return line;
  }
  return "";
}

/** Lines kept as written, headings as bold text, long lines and long plans cut. */
function verbatim(lines: readonly string[]): string {
  const out = lines.map((line) => {
    const heading = MARKDOWN_HEADING.exec(line);
    const text = heading === null ? line.trimEnd() : `**${heading[2] ?? ""}**`;
    return clip(text, MAX_PLAN_LINE_CHARS);
  });
  while (out.length > 0 && (out[out.length - 1] ?? "").trim() === "") out.pop();
  if (out.length <= MAX_PLAN_LINES) return out.join("\n");
  const fenced = FENCE.test(out[0] ?? "");
  const kept = out.slice(0, MAX_PLAN_LINES - (fenced ? 2 : 1));
  kept.push(`… ${out.length - kept.length - (fenced ? 1 : 0)} more lines`);
  if (fenced) kept.push(out[out.length - 1] ?? "```");
  return kept.join("\n");
}
