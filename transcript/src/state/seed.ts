/**
 * The first message of a session started from a SessionState (`compaction context import`):
 * plain markdown in a user message, so any model of any provider can continue the work.
 */
import { DEFAULT_SECTION_LIMITS, type ExtraSection, isHighSurrogate, type PiUserMessage, readSummary, type SessionState } from "@compaction/core";
import type { NewEntry } from "../new-entries.js";

/** Limits of the seed text; the state itself keeps everything. */
export interface SessionSeedOptions {
  /** Most items per list (goal, constraints, done, open tasks, decisions, commands, failed). Default 20. */
  readonly maxItemsPerSection?: number;
  /** Most paths under each of Read and Modified. Default 50. */
  readonly maxFilesPerList?: number;
  /** Most identifiers. Default 64. */
  readonly maxIdentifiers?: number;
  /** Longest quoted user or assistant text of the last exchange, in characters. Default 4000. */
  readonly maxQuoteChars?: number;
}

/** The heading the seed text starts with. */
export const SESSION_SEED_TITLE = "# Continued session";

const DEFAULT_QUOTE_CHARS = 4000;

const SOURCE_NAMES: Readonly<Record<SessionState["source"]["format"], string>> = {
  pi: "pi session",
  "claude-code": "Claude Code session",
  codex: "Codex session",
  messages: "conversation",
};

type Keep = "oldest" | "newest";

/**
 * The markdown a new session starts with: a line saying it continues an earlier session, the
 * state's lists (longest ones cut to their newest items, goals to their oldest), the sections
 * of `summary` the lists do not cover (e.g. an earlier model-written summary's own sections),
 * and the last exchange quoted. Empty sections are left out.
 */
export function renderSessionSeed(state: SessionState, options: SessionSeedOptions = {}): string {
  const maxItems = options.maxItemsPerSection ?? DEFAULT_SECTION_LIMITS.maxItemsPerSection;
  const maxFiles = options.maxFilesPerList ?? DEFAULT_SECTION_LIMITS.maxFilesPerList;
  const maxIdentifiers = options.maxIdentifiers ?? DEFAULT_SECTION_LIMITS.maxIdentifiers;
  const maxQuote = options.maxQuoteChars ?? DEFAULT_QUOTE_CHARS;
  const sections: string[][] = [
    [SESSION_SEED_TITLE, "", introLine(state)],
    listSection("## Goal", state.goal, "oldest", maxItems),
    listSection("## Current Task", state.currentTask ?? [], "newest", maxItems),
    planSection(state.plan ?? []),
    listSection("## Constraints & Preferences", state.constraints, "newest", maxItems),
    listSection("## Done", state.done, "newest", maxItems),
    listSection("## Open Tasks", state.openTasks, "newest", maxItems),
    listSection("## Key Decisions", state.decisions, "newest", maxItems),
    filesSection(state, maxFiles),
    toolSection(state, maxItems),
    listSection("## Identifiers", state.identifiers, "newest", maxIdentifiers, code),
    ...readSummary(state.summary).extras.map(extraSection),
    lastExchangeSection(state, maxQuote),
  ];
  return sections
    .filter((lines) => lines.length > 0)
    .map((lines) => lines.join("\n"))
    .join("\n\n");
}

/**
 * The entries a new pi session starts with: one user message holding `renderSessionSeed(state)`.
 * Pass them to `createSession`.
 */
export function sessionSeedEntries(state: SessionState, now: Date = new Date()): NewEntry[] {
  const message: PiUserMessage = {
    role: "user",
    content: [{ type: "text", text: renderSessionSeed(state) }],
    timestamp: now.getTime(),
  };
  return [{ type: "message", message, timestamp: now.toISOString() }];
}

function introLine(state: SessionState): string {
  const { source } = state;
  const details = [SOURCE_NAMES[source.format] + (source.session === null ? "" : ` \`${source.session}\``)];
  if (source.cwd !== null) details.push(`in \`${source.cwd}\``);
  const lastActive = state.lastExchange.timestamp;
  details.push(lastActive === null ? `exported ${day(state.exportedAt)}` : `last active ${day(lastActive)}`);
  return (
    `This conversation continues an earlier one (${details.join(", ")}). ` +
    "Its state follows: what was asked, what is done and still open, and the last exchange. Continue from there."
  );
}

/** `2026-01-31 17:04 UTC` from an ISO time (the input itself when it does not parse). */
function day(iso: string): string {
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return iso;
  return `${time.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const bullet = (text: string): string => `- ${oneLine(text)}`;
const code = (text: string): string => (text.includes("`") ? `- ${oneLine(text)}` : `- \`${oneLine(text)}\``);

/** A heading and up to `max` items; a note says how many were left out. Empty list: no section. */
function listSection(heading: string, items: readonly string[], keep: Keep, max: number, render = bullet): string[] {
  if (items.length === 0) return [];
  return [heading, ...listLines(items, keep, max, render)];
}

function listLines(items: readonly string[], keep: Keep, max: number, render: (text: string) => string): string[] {
  const limit = Math.max(0, max);
  if (items.length <= limit) return items.map(render);
  const left = items.length - limit;
  if (keep === "oldest") return [...items.slice(0, limit).map(render), `- (${left} later ${plural(left, "item")} not shown)`];
  return [`- (${left} earlier ${plural(left, "item")} not shown)`, ...items.slice(items.length - limit).map(render)];
}

/** The plan as written (several lines per item): a tree or list loses its meaning on one line. */
function planSection(plan: readonly string[]): string[] {
  if (plan.length === 0) return [];
  return ["## Plan", plan.join("\n\n")];
}

function filesSection(state: SessionState, max: number): string[] {
  const { read, modified } = state.files;
  if (read.length === 0 && modified.length === 0) return [];
  const lines = ["## Files"];
  if (read.length > 0) lines.push("### Read", ...listLines(read, "newest", max, code));
  if (modified.length > 0) lines.push("### Modified", ...listLines(modified, "newest", max, code));
  return lines;
}

function toolSection(state: SessionState, max: number): string[] {
  const { tools, commands, failed } = state.toolOperations;
  if (tools.length === 0 && commands.length === 0 && failed.length === 0) return [];
  const lines = ["## Tool Operations"];
  for (const tool of tools) {
    const failures = tool.failed === 0 ? "" : `, ${tool.failed} failed`;
    lines.push(`- \`${tool.name}\`: ${tool.calls} ${plural(tool.calls, "call")}${failures}`);
  }
  if (commands.length > 0) lines.push("### Commands", ...listLines(commands, "newest", max, code));
  if (failed.length > 0) lines.push("### Failed", ...listLines(failed, "newest", max, bullet));
  return lines;
}

/** A section of the summary the lists do not cover, kept as written (a `###` one under a `##` heading). */
function extraSection(extra: ExtraSection): string[] {
  return [extra.heading.replace(/^###\s+/, "## "), ...extra.lines];
}

function lastExchangeSection(state: SessionState, maxChars: number): string[] {
  const { user, assistant } = state.lastExchange;
  if (user === null && assistant === null) return [];
  const lines = ["## Last Exchange"];
  if (user !== null) lines.push("User:", ...quote(user, maxChars));
  if (assistant !== null) lines.push(...(user === null ? [] : [""]), "Assistant:", ...quote(assistant, maxChars));
  return lines;
}

/** Markdown quote lines of `text`, cut to `maxChars` with a note when longer. */
function quote(text: string, maxChars: number): string[] {
  let body = text;
  let note: string | undefined;
  if (text.length > maxChars) {
    body = cutAt(text, maxChars);
    note = `[… ${text.length - body.length} more characters not shown]`;
  }
  const lines = body.split(/\r?\n/).map((line) => (line === "" ? ">" : `> ${line}`));
  if (note !== undefined) lines.push(">", `> ${note}`);
  return lines;
}

/** The first `length` characters, one fewer if that would split a surrogate pair. */
function cutAt(text: string, length: number): string {
  const cut = text.slice(0, Math.max(0, length));
  return isHighSurrogate(cut.charCodeAt(cut.length - 1)) ? cut.slice(0, -1) : cut;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}
