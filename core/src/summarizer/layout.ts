/**
 * The fixed headings of a structured summary (the extractive summarizer writes them, model summarizers are asked for them), in their fixed order, and reading a previous
 * summary (ours, or any markdown with `## ` headings) back into per-section item lists.
 */
import { type ItemStyle, parseItemLine, parseSections, unwrapCode } from "./sections.js";

/** The item lists a history summary is made of. */
export type SlotId =
  | "goal"
  | "currentTask"
  | "plan"
  | "constraints"
  | "done"
  | "inProgress"
  | "decisions"
  | "filesRead"
  | "filesModified"
  | "commands"
  | "failed"
  | "identifiers"
  | "nextSteps";

export const SLOT_IDS: readonly SlotId[] = [
  "goal",
  "currentTask",
  "plan",
  "constraints",
  "done",
  "inProgress",
  "decisions",
  "filesRead",
  "filesModified",
  "commands",
  "failed",
  "identifiers",
  "nextSteps",
];

/** One heading of the layout. Headings without a slot are containers of `### ` subsections. */
export interface LayoutEntry {
  readonly level: 2 | 3;
  readonly title: string;
  readonly slot?: SlotId;
  readonly style: ItemStyle;
}

/** The history summary: headings in order. Other code and tests parse these exact titles. */
export const HISTORY_LAYOUT: readonly LayoutEntry[] = [
  { level: 2, title: "Goal", slot: "goal", style: "bullet" },
  { level: 2, title: "Current Task", slot: "currentTask", style: "bullet" },
  { level: 2, title: "Plan", slot: "plan", style: "verbatim" },
  { level: 2, title: "Constraints & Preferences", slot: "constraints", style: "bullet" },
  { level: 2, title: "Progress", style: "bullet" },
  { level: 3, title: "Done", slot: "done", style: "done" },
  { level: 3, title: "In Progress", slot: "inProgress", style: "todo" },
  { level: 2, title: "Key Decisions", slot: "decisions", style: "bullet" },
  { level: 2, title: "Files", style: "bullet" },
  { level: 3, title: "Read", slot: "filesRead", style: "code" },
  { level: 3, title: "Modified", slot: "filesModified", style: "code" },
  { level: 2, title: "Commands & Tool Calls", slot: "commands", style: "code" },
  { level: 3, title: "Failed", slot: "failed", style: "bullet" },
  { level: 2, title: "Identifiers", slot: "identifiers", style: "code" },
  { level: 2, title: "Next Steps", slot: "nextSteps", style: "numbered" },
];

/** Headings of a turn-prefix summary (pi's TURN_PREFIX format). */
export const TURN_PREFIX_TITLES = {
  request: "Original Request",
  progress: "Early Progress",
  context: "Context for Suffix",
} as const;

/** The heading of the focus line at the top of a summary. */
export const FOCUS_TITLE = "Focus";

/** Goal items for user asks that were not answered yet start with this. */
export const PENDING_PREFIX = "Pending: ";
/** Next-step items for unanswered user asks start with this. */
export const RESPOND_PREFIX = "Respond to: ";

/** How many items each kind of section of a structured summary may hold. */
export interface SectionLimits {
  /** Most items per section (goal, constraints, progress, decisions, commands, failures, next steps). */
  readonly maxItemsPerSection: number;
  /** Most paths in each of Files/Read and Files/Modified. */
  readonly maxFilesPerList: number;
  /** Most entries under Identifiers. */
  readonly maxIdentifiers: number;
  /** Longest item in characters. */
  readonly maxItemChars: number;
}

/**
 * The limits a summary's sections are written with when nothing says otherwise: the extractive
 * summarizer's defaults, and what a session seed is cut to.
 */
export const DEFAULT_SECTION_LIMITS: SectionLimits = Object.freeze({
  maxItemsPerSection: 20,
  maxFilesPerList: 50,
  maxIdentifiers: 64,
  maxItemChars: 300,
});

/**
 * Heading of the one-line note a history summary is when its messages held nothing to keep
 * (say, tool output only): never empty headings, never an empty answer for messages that exist.
 * Not carried into the next summary.
 */
export const NOTHING_KEPT_TITLE = "Earlier Messages";

/** Heading under which text before the first heading of a previous summary is kept. */
export const EARLIER_SUMMARY_HEADING = "## Earlier Summary";

/** A section of a previous summary this summarizer does not know; kept verbatim. */
export interface ExtraSection {
  /** The heading line as written (`## Critical Context`, `### Blocked`). */
  readonly heading: string;
  /** For a `### ` section under one of our `## ` headings: that heading's title. */
  readonly parent?: string;
  readonly lines: readonly string[];
}

/** A summary as item lists, oldest first, plus the unknown sections kept verbatim. */
export interface SummaryState {
  readonly slots: Readonly<Record<SlotId, readonly string[]>>;
  readonly extras: readonly ExtraSection[];
}

/** A state with every list empty. */
export function emptyState(): SummaryState {
  return { slots: emptySlots(), extras: [] };
}

type MutableExtra = { heading: string; parent?: string; lines: string[] };

const PI_FILE_TAGS = /<(read-files|modified-files)>([\s\S]*?)<\/\1>/g;
const TITLE_NOISE = /[^a-z0-9 ]+/g;
const SPACES = / +/g;

/** Titles (normalised) that name our `## ` headings, with a few spellings models use. */
const TOP_ALIASES = new Map<string, string>([
  ["focus", FOCUS_TITLE],
  ["goal", "Goal"],
  ["goals", "Goal"],
  ["current task", "Current Task"],
  ["plan", "Plan"],
  ["agreed plan", "Plan"],
  ["constraints and preferences", "Constraints & Preferences"],
  ["constraints", "Constraints & Preferences"],
  ["progress", "Progress"],
  ["key decisions", "Key Decisions"],
  ["decisions", "Key Decisions"],
  ["files", "Files"],
  ["commands and tool calls", "Commands & Tool Calls"],
  ["commands", "Commands & Tool Calls"],
  ["identifiers", "Identifiers"],
  ["next steps", "Next Steps"],
]);

/**
 * The sections of a split turn's summary (carried in a previous summary after pi's
 * "Turn Context (split turn)" line). On the next compaction that turn is history: its request
 * joins the goal and its progress and context join Done, so split-turn blocks do not pile up.
 */
const TURN_PREFIX_SLOTS = new Map<string, SlotId>([
  [normaliseTitle(TURN_PREFIX_TITLES.request), "goal"],
  [normaliseTitle(TURN_PREFIX_TITLES.progress), "done"],
  [normaliseTitle(TURN_PREFIX_TITLES.context), "done"],
]);

/** pi's separator line between a history summary and a split turn's summary. */
const SPLIT_TURN_LINE = /^\s*(?:---|\*\*Turn Context \(split turn\):\*\*)\s*$/;

/**
 * Reads a previous summary. Known sections become item lists; unknown ones are kept verbatim;
 * pi's `<read-files>`/`<modified-files>` lists count as files; text before the first heading
 * is kept under "Earlier Summary". The `## Focus` of a previous run is not carried over.
 */
export function readSummary(text: string): SummaryState {
  const slots = emptySlots();
  const extras: MutableExtra[] = [];
  const body = text.replace(PI_FILE_TAGS, (_whole, tag: string, list: string) => {
    const slot: SlotId = tag === "read-files" ? "filesRead" : "filesModified";
    for (const line of list.split("\n")) {
      const item = parseItemLine(line);
      if (item !== undefined) slots[slot].push(unwrapCode(item.text));
    }
    return "";
  });
  const parsed = parseSections(body);
  if (parsed.preamble.length > 0) extras.push({ heading: EARLIER_SUMMARY_HEADING, lines: [...parsed.preamble] });

  let parent: LayoutEntry | undefined;
  let unknownParent: MutableExtra | undefined;
  for (const section of parsed.sections) {
    const turnSlot = section.level === 2 ? TURN_PREFIX_SLOTS.get(normaliseTitle(section.title)) : undefined;
    if (turnSlot !== undefined) {
      // Prose or list items alike: a turn-prefix summary writes its request as plain text.
      for (const line of section.lines) {
        const text = (parseItemLine(line)?.text ?? line).trim();
        if (text !== "" && !SPLIT_TURN_LINE.test(text)) slots[turnSlot].push(text);
      }
      parent = undefined;
      unknownParent = undefined;
      continue;
    }
    if (section.level === 2 && section.title === NOTHING_KEPT_TITLE) {
      parent = undefined;
      unknownParent = undefined;
      continue;
    }
    if (section.level === 2) {
      parent = topEntry(section.title);
      unknownParent = undefined;
      if (parent === undefined) {
        unknownParent = { heading: section.heading, lines: [...section.lines] };
        extras.push(unknownParent);
      } else if (parent.title !== FOCUS_TITLE) {
        readItems(slots, parent, section.lines);
      }
      continue;
    }
    if (unknownParent !== undefined) {
      unknownParent.lines.push(section.heading, ...section.lines);
      continue;
    }
    const child = parent === undefined ? undefined : childEntry(parent, section.title);
    if (child !== undefined) readItems(slots, child, section.lines);
    else if (parent !== undefined && parent.title !== FOCUS_TITLE) {
      extras.push({ heading: section.heading, parent: parent.title, lines: [...section.lines] });
    } else extras.push({ heading: section.heading, lines: [...section.lines] });
  }
  return { slots, extras };
}

/** The slot items directly under a container go to (Progress -> Done, Files -> Read). */
function slotOf(entry: LayoutEntry): SlotId | undefined {
  if (entry.slot !== undefined) return entry.slot;
  if (entry.title === "Progress") return "done";
  if (entry.title === "Files") return "filesRead";
  return undefined;
}

/** A done item naming a file the work wrote or edited: the file is listed as modified again on reading. */
const DONE_FILE_ITEM = /^(?:Wrote|Edited|Patched) `([^`]+)`$/;

function readItems(slots: Record<SlotId, string[]>, entry: LayoutEntry, lines: readonly string[]): void {
  const slot = slotOf(entry);
  if (slot === undefined) return;
  if (slot === "plan") {
    // Verbatim: a tree or list is one item, its layout and blank lines kept.
    const text = lines.filter((line) => !SPLIT_TURN_LINE.test(line)).join("\n").trim();
    if (text !== "") slots.plan.push(text);
    return;
  }
  const code = HISTORY_LAYOUT.some((e) => e.slot === slot && e.style === "code");
  for (const line of lines) {
    if (SPLIT_TURN_LINE.test(line)) continue;
    const item = parseItemLine(line);
    if (item === undefined) continue;
    const text = code ? unwrapCode(item.text) : item.text;
    let target = slot;
    if (slot === "done" || slot === "inProgress") {
      if (item.checked === true) target = "done";
      else if (item.checked === false) target = "inProgress";
    }
    slots[target].push(text);
    const file = target === "done" ? DONE_FILE_ITEM.exec(text) : null;
    if (file?.[1] !== undefined && !slots.filesModified.includes(file[1])) slots.filesModified.push(file[1]);
  }
}

function normaliseTitle(title: string): string {
  return title.toLowerCase().replace(/&/g, " and ").replace(TITLE_NOISE, " ").replace(SPACES, " ").trim();
}

function topEntry(title: string): LayoutEntry | undefined {
  const canonical = TOP_ALIASES.get(normaliseTitle(title));
  if (canonical === undefined) return undefined;
  if (canonical === FOCUS_TITLE) return { level: 2, title: FOCUS_TITLE, style: "text" };
  return HISTORY_LAYOUT.find((entry) => entry.level === 2 && entry.title === canonical);
}

function childEntry(parent: LayoutEntry, title: string): LayoutEntry | undefined {
  const start = HISTORY_LAYOUT.indexOf(parent);
  if (start === -1) return undefined;
  const wanted = normaliseTitle(title);
  for (let i = start + 1; i < HISTORY_LAYOUT.length; i++) {
    const entry = HISTORY_LAYOUT[i];
    if (entry === undefined || entry.level === 2) break;
    if (normaliseTitle(entry.title) === wanted) return entry;
  }
  return undefined;
}

function emptySlots(): Record<SlotId, string[]> {
  const slots = {} as Record<SlotId, string[]>;
  for (const id of SLOT_IDS) slots[id] = [];
  return slots;
}
