/**
 * One linear pass over a list of MessageFacts that pulls out what a summary keeps: requests,
 * constraints, progress, decisions, files, commands, failures, identifiers and next steps.
 * Works on facts only, so any message format works.
 */
import { clip, collapseWhitespace, declaredNames, type MessageFacts, namesIn, readToolCall, type ToolCallReading } from "@compaction/core";
import {
  APPROVAL,
  CHATTER_OPENER,
  CHECKING_COMMAND,
  COMPLETION_CUE,
  CONSTRAINT_CUE,
  DECISION_CUE,
  ERROR_LINE,
  FILLER_SENTENCE,
  GIT_COMMIT_MESSAGE,
  INTENT_LEAD_IN,
  LOOKING_COMMAND,
  NEXT_STEP_CUE,
  NOT_A_CONSTRAINT,
  PASTED_ERROR,
  REACTION_OPENER,
  SLASH_COMMAND,
  TRAILING_PUNCTUATION,
} from "./cues.js";
import { collectIdentifiers } from "./identifiers.js";
import { ItemList } from "./item-list.js";
import { findPlan, planFileSummary, WrittenFiles } from "./plan.js";
import { firstNonBlankLine, looksLikeProse, proseLines, proseSentences, splitSentences } from "./prose.js";

export interface ExtractOptions {
  /** Longest item, in characters; longer items are cut with "…". */
  readonly maxItemChars: number;
}

/** What one run of messages says, section by section, oldest first within each list. */
export interface Extraction {
  /** User requests made before the assistant's first reply. */
  readonly firstRequests: readonly string[];
  /** User messages after the assistant's last reply (not answered yet). */
  readonly pendingAsks: readonly string[];
  /** The newest requests the assistant answered, after the opening request (at most two, oldest first). */
  readonly currentTask: readonly string[];
  /**
   * The latest plan, verbatim: a plan written in a message (newer than any plan file), then the
   * open work of the plan file the assistant wrote last. Empty when there is none.
   */
  readonly plan: readonly string[];
  readonly constraints: readonly string[];
  readonly done: readonly string[];
  readonly inProgress: readonly string[];
  readonly decisions: readonly string[];
  /** Files read (some may also be modified; the summary lists those as modified only). */
  readonly filesRead: readonly string[];
  readonly filesModified: readonly string[];
  readonly commands: readonly string[];
  readonly failed: readonly string[];
  readonly identifiers: readonly string[];
  /** From the assistant's last reply. */
  readonly nextSteps: readonly string[];
  /** True when the messages contain an assistant reply with text. */
  readonly hasAssistantReply: boolean;
  /** Texts of summary messages found among the messages (earlier compactions). */
  readonly summaries: readonly string[];
  /** Paths modified and commands run successfully: shows earlier in-progress work done. */
  readonly completedTargets: readonly string[];
}

/** How many of the newest answered requests make up the current task. */
const MAX_CURRENT_TASK = 2;
/** Longest request kept under Current Task: the user's own words, so longer than other items. */
const CURRENT_TASK_CHARS = 600;
/** Longest command or commit message named in a done item. */
const DONE_COMMAND_CHARS = 120;

/** How many user messages before the first reply count as the opening request. */
const MAX_FIRST_REQUESTS = 3;
/** Arguments shown in a failed-call item, in characters, so the error line still fits. */
const FAILED_ARGS_CHARS = 100;

interface ResultInfo {
  readonly isError: boolean;
  readonly text: string;
  readonly toolName: string | undefined;
}

type CallStatus = "ok" | "failed" | "pending";

interface Failure {
  readonly text: string;
  /** What a later successful call must match to show the failure resolved: the command, or tool and path. */
  readonly key: string;
  readonly callIndex: number;
}

const prose = () => new ItemList({ repeat: "first", caseless: true });
const exact = () => new ItemList({ repeat: "latest", caseless: false });

/** Extracts the summary's raw material from `messages` in time linear in their size. */
export function extractFacts(messages: readonly MessageFacts[], options: ExtractOptions): Extraction {
  const results = collectResults(messages);
  const item = (text: string): string => clip(collapseWhitespace(text), options.maxItemChars);
  const statusOf = (id: string): CallStatus => {
    const result = results.get(id);
    if (result === undefined) return "pending";
    return result.isError ? "failed" : "ok";
  };

  const firstRequests: string[] = [];
  const firstRequestIndexes = new Set<number>();
  const asks: { index: number; text: string }[] = [];
  const summaries: string[] = [];
  const issued = new Set<string>();
  const constraints = prose();
  const decisions = prose();
  const filesRead = exact();
  const filesModified = exact();
  const commands = exact();
  const identifiers = exact();
  const completed = exact();
  const done = new ItemList({ repeat: "latest", caseless: true });
  const inProgress = new ItemList({ repeat: "first", caseless: true });
  const failures: Failure[] = [];
  /** Keys of successful calls, with the index of the last one: resolves earlier failures. */
  const succeeded = new Map<string, number>();
  const written = new WrittenFiles();
  const addIdentifier = (identifier: string): void => identifiers.add(identifier);
  let callIndex = 0;
  let lastReplyIndex = -1;
  let lastReplyText = "";
  let messagePlan: { index: number; text: string } | undefined;
  let planFile: { index: number; path: string } | undefined;

  const readUser = (facts: MessageFacts, index: number): void => {
    const text = facts.text.trim();
    if (text.length === 0 || SLASH_COMMAND.test(text)) return;
    // A pasted error is a failure to look at, not a request and not a rule.
    if (PASTED_ERROR.test(text)) {
      failures.push({ text: item(`user reported: ${errorLine(text)}`), key: "", callIndex: callIndex++ });
      return;
    }
    if (lastReplyIndex === -1 && firstRequests.length < MAX_FIRST_REQUESTS) {
      firstRequests.push(item(text));
      firstRequestIndexes.add(index);
    }
    asks.push({ index, text });
    for (const sentence of proseSentences(text)) {
      if (!looksLikeProse(sentence)) continue;
      if (isConstraint(sentence)) constraints.add(item(sentence));
      const decision = decisionItem(sentence, options.maxItemChars);
      if (decision !== undefined) decisions.add(decision);
    }
    const plan = findPlan(text, false);
    if (plan !== undefined) messagePlan = { index, text: plan };
    collectIdentifiers(text, addIdentifier);
  };

  const readAssistantText = (index: number, text: string, isNewestReply: boolean): void => {
    lastReplyIndex = index;
    lastReplyText = text;
    for (const sentence of proseSentences(text)) {
      const completion = completionItem(sentence, options.maxItemChars);
      if (completion !== undefined) done.add(completion);
      if (!looksLikeProse(sentence)) continue;
      const decision = decisionItem(sentence, options.maxItemChars);
      if (decision !== undefined) decisions.add(decision);
    }
    const plan = findPlan(text, isNewestReply);
    if (plan !== undefined) messagePlan = { index, text: plan };
    collectIdentifiers(text, addIdentifier);
  };

  const readToolCalls = (facts: MessageFacts, index: number): void => {
    for (const call of facts.toolCalls) {
      issued.add(call.id);
      const reading = readToolCall(call);
      const status = statusOf(call.id);
      // A call without a result before the newest calls was abandoned (aborted): neither done nor running.
      const abandoned = status === "pending" && index !== newestCalls;
      const key = failureKey(reading);
      if (status === "ok" && key !== "") succeeded.set(key, callIndex);
      switch (reading.kind) {
        case "read":
          if (status !== "failed") for (const path of reading.paths) filesRead.add(path);
          break;
        case "modify":
          if (status === "failed") break;
          for (const path of reading.paths) {
            filesModified.add(path);
            if (status === "ok") completed.add(path);
            if (!abandoned) (status === "ok" ? done : inProgress).add(fileWorkItem(reading, path, status));
            if (followWrite(written, reading, call.arguments, path)) planFile = { index, path };
          }
          // The names in the code being changed: what the agent goes on to call and fix.
          if (status === "ok") for (const name of declaredNames(call.arguments)) addIdentifier(name);
          break;
        case "command": {
          const command = item(reading.command ?? reading.argsSummary);
          commands.add(command);
          if (status === "ok") completed.add(command);
          const work = commandWorkItem(reading.command ?? reading.argsSummary);
          if (work !== undefined && status === "ok") done.add(work);
          else if (work !== undefined && status === "pending" && !abandoned) inProgress.add(`${work} (no result yet)`);
          collectIdentifiers(reading.command ?? "", addIdentifier);
          break;
        }
        case "other": {
          commands.add(item(`${reading.name}(${reading.argsSummary})`));
          // Its arguments are the agent's own words (a sub-agent's task, a message to a teammate).
          for (const text of argumentTexts(call.arguments)) collectIdentifiers(text, addIdentifier);
          // A tool that neither reads, edits nor runs a command (a delegated agent, a search, a
          // fetch) answers in prose: its report names what was made and found, what the agent
          // goes on to use (a sub-agent's report is where the files it created are named).
          const answer = status === "ok" ? results.get(call.id)?.text : undefined;
          if (answer !== undefined) {
            collectIdentifiers(answer, addIdentifier);
            for (const name of namesIn(answer)) addIdentifier(name);
          }
          break;
        }
      }
      const result = results.get(call.id);
      if (status === "failed" && result !== undefined && !isEmptySearch(reading, result.text)) {
        const name = result.toolName ?? reading.name;
        const args = clip(collapseWhitespace(reading.argsSummary), FAILED_ARGS_CHARS);
        failures.push({ text: item(`${name}(${args}): ${errorLine(result.text)}`), key, callIndex });
      }
      callIndex++;
    }
  };

  const readOrphanResult = (facts: MessageFacts): void => {
    if (!facts.isError || facts.toolResultIds.some((id) => issued.has(id))) return;
    failures.push({ text: item(`${facts.toolName ?? "tool"}: ${errorLine(facts.text)}`), key: "", callIndex: callIndex++ });
  };

  const newestReply = newestReplyIndex(messages);
  const newestCalls = newestCallsIndex(messages);
  messages.forEach((facts, index) => {
    switch (facts.kind) {
      case "summary":
        if (facts.text.trim().length > 0) summaries.push(facts.text);
        break;
      case "user":
        readUser(facts, index);
        break;
      case "assistant": {
        const text = facts.text.trim();
        if (text.length > 0) readAssistantText(index, text, index === newestReply);
        readToolCalls(facts, index);
        break;
      }
      case "toolResult":
        readOrphanResult(facts);
        break;
      default:
        break;
    }
  });

  const failed = exact();
  for (const failure of failures) {
    const laterSuccess = failure.key === "" ? undefined : succeeded.get(failure.key);
    failed.add(laterSuccess !== undefined && laterSuccess > failure.callIndex ? `${failure.text} ${RESOLVED_MARK}` : failure.text);
  }
  for (const text of inProgress.values()) done.delete(text);

  const pendingAsks = asks.filter((ask) => ask.index > lastReplyIndex && !firstRequestIndexes.has(ask.index));
  const answered = asks.filter((ask) => ask.index < lastReplyIndex && !firstRequestIndexes.has(ask.index) && !APPROVAL.test(ask.text));
  const plan: string[] = [];
  if (messagePlan !== undefined && (planFile === undefined || messagePlan.index > planFile.index)) plan.push(messagePlan.text);
  if (planFile !== undefined) {
    const open = planFileSummary(planFile.path, written.content(planFile.path) ?? "");
    if (open !== undefined) plan.push(open);
  }

  return {
    firstRequests,
    pendingAsks: pendingAsks.map((ask) => item(ask.text)),
    currentTask: answered.slice(-MAX_CURRENT_TASK).map((ask) => clip(collapseWhitespace(ask.text), Math.max(options.maxItemChars, CURRENT_TASK_CHARS))),
    plan,
    constraints: constraints.values(),
    done: done.values(),
    inProgress: inProgress.values(),
    decisions: decisions.values(),
    filesRead: filesRead.values(),
    filesModified: filesModified.values(),
    commands: commands.values(),
    failed: failed.values(),
    identifiers: identifiers.values(),
    nextSteps: nextStepsOf(lastReplyText, options.maxItemChars),
    hasAssistantReply: lastReplyIndex !== -1,
    summaries,
    completedTargets: completed.values(),
  };
}

/** Appended to a failed call that a later call of the same command (or tool on the same file) got through. */
export const RESOLVED_MARK = "(later succeeded)";

/** The index of the newest assistant message with tool calls, or -1. */
function newestCallsIndex(messages: readonly MessageFacts[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const facts = messages[i];
    if (facts?.kind === "assistant" && facts.toolCalls.length > 0) return i;
  }
  return -1;
}

/** A command that only looked and found nothing (`grep` exiting with 1): no error anyone must act on. */
function isEmptySearch(reading: ToolCallReading, output: string): boolean {
  if (reading.kind !== "command" || !LOOKING_COMMAND.test(collapseWhitespace(reading.command ?? ""))) return false;
  const text = output.trim();
  return text === "" || /^command exited with code 1\.?$/i.test(text);
}

/** The index of the newest assistant message with text, or -1. */
function newestReplyIndex(messages: readonly MessageFacts[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const facts = messages[i];
    if (facts?.kind === "assistant" && facts.text.trim().length > 0) return i;
  }
  return -1;
}

/** What identifies "the same call" when telling whether a failure was got through later. */
function failureKey(reading: ToolCallReading): string {
  if (reading.kind === "command") return `$ ${collapseWhitespace(reading.command ?? reading.argsSummary)}`;
  if (reading.paths.length > 0) return `${reading.kind} ${reading.paths.join(", ")}`;
  return "";
}

/** "Created `src/a.ts`", "Edited `src/a.ts`": what a successful (or still running) file call did. */
function fileWorkItem(reading: ToolCallReading, path: string, status: CallStatus): string {
  const verb = reading.verb === "wrote" ? "Wrote" : reading.verb === "patched" ? "Patched" : "Edited";
  return status === "ok" ? `${verb} \`${path}\`` : `${verb} \`${path}\` (no result yet)`;
}

/**
 * The done item of a shell command: a commit by its message, a command that changes something
 * by itself; undefined for commands that only look (ls, cat, grep, git status) or check the
 * work (build, test, lint), which the summary lists as commands instead.
 */
export function commandWorkItem(command: string): string | undefined {
  const trimmed = collapseWhitespace(command);
  const commit = GIT_COMMIT_MESSAGE.exec(trimmed);
  if (commit !== null) return `Committed "${clip(commit[1] ?? commit[2] ?? "", DONE_COMMAND_CHARS)}"`;
  if (LOOKING_COMMAND.test(trimmed) || CHECKING_COMMAND.test(trimmed)) return undefined;
  return `Ran \`${clip(trimmed, DONE_COMMAND_CHARS)}\``;
}

/** Records a write or edit in `files`; true when the call touched a markdown file whose content is followed. */
function followWrite(files: WrittenFiles, reading: ToolCallReading, rawArgs: unknown, path: string): boolean {
  const args = argumentsRecord(rawArgs);
  const content = firstString(args, ["content", "file_text", "text", "contents"]);
  if (reading.verb === "wrote" && content !== undefined) {
    files.write(path, content);
    return true;
  }
  if (!files.has(path)) return false;
  const edits = Array.isArray(args["edits"]) ? (args["edits"] as unknown[]) : [args];
  for (const edit of edits) {
    const record = argumentsRecord(edit);
    const oldText = firstString(record, ["oldText", "old_string", "old_str"]);
    const newText = firstString(record, ["newText", "new_string", "new_str"]);
    if (oldText !== undefined && newText !== undefined) files.edit(path, oldText, newText);
  }
  return true;
}

function argumentsRecord(value: unknown): Record<string, unknown> {
  if (typeof value === "string") {
    try {
      return argumentsRecord(JSON.parse(value) as unknown);
    } catch {
      return {};
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function firstString(record: Record<string, unknown>, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const value = record[field];
    if (typeof value === "string") return value;
  }
  return undefined;
}

/**
 * A decision sentence as an item, verbatim; a chatty lead-in ("Now let me", "Good,") is
 * removed with the trailing colon. Undefined when it is no decision or only chatter is left.
 */
function decisionItem(sentence: string, maxChars: number): string | undefined {
  if (!DECISION_CUE.test(sentence) || sentence.endsWith("?")) return undefined;
  if (!CHATTY_LEAD_IN.test(sentence)) return clip(collapseWhitespace(sentence), maxChars);
  const text = progressItem(sentence, maxChars);
  if (text.split(/\s+/).length < MIN_STATEMENT_WORDS || CHATTER_OPENER.test(text)) return undefined;
  return text;
}

/** The openers of a decision sentence that narrate rather than decide ("Now let me", "Good,"). */
const CHATTY_LEAD_IN = /^(?:now|good|great|perfect|ok(?:ay)?|alright|let me)\b/i;

/** Longest sentence taken as a completion: longer ones are explanations, not status lines. */
const MAX_COMPLETION_CHARS = 160;

/** An assistant sentence stating something finished ("WP15 complete", "All checks pass"), not chatter. */
function completionItem(sentence: string, maxChars: number): string | undefined {
  if (!COMPLETION_CUE.test(sentence) || sentence.endsWith("?") || FILLER_SENTENCE.test(sentence)) return undefined;
  if (sentence.trim().split(/\s+/).length < 2 || sentence.length > MAX_COMPLETION_CHARS) return undefined;
  if (CHATTER_OPENER.test(sentence) || INTENT_LEAD_IN.test(sentence) || NEXT_STEP_CUE.test(sentence)) return undefined;
  return progressItem(sentence, maxChars);
}

/** Characters of a failed call's output searched for the line that names the error. */
const ERROR_SEARCH_CHARS = 4000;
/** Fewest words of an assistant sentence that can stand as a progress item. */
const MIN_STATEMENT_WORDS = 3;

/** A user sentence stating a constraint: a cue word, not a question, not "I don't think". */
function isConstraint(sentence: string): boolean {
  return CONSTRAINT_CUE.test(sentence) && !sentence.endsWith("?") && !NOT_A_CONSTRAINT.test(sentence);
}


/**
 * The line of a failed call's output to show: the first line that names an error when the
 * output's start has one (tools often print a banner first), else the first line.
 */
function errorLine(output: string): string {
  const head = output.length > ERROR_SEARCH_CHARS ? output.slice(0, ERROR_SEARCH_CHARS) : output;
  for (const line of head.split("\n")) {
    if (ERROR_LINE.test(line)) return line.trim();
  }
  return firstNonBlankLine(output) || "(no output)";
}

/** Tool results by the call id they answer. */
function collectResults(messages: readonly MessageFacts[]): Map<string, ResultInfo> {
  const results = new Map<string, ResultInfo>();
  for (const facts of messages) {
    for (const id of facts.toolResultIds) {
      results.set(id, { isError: facts.isError, text: facts.text, toolName: facts.toolName });
    }
  }
  return results;
}

/** "Now let me read the config:" -> "Read the config". */
function progressItem(sentence: string, maxChars: number): string {
  const stripped = collapseWhitespace(sentence).replace(INTENT_LEAD_IN, "").replace(TRAILING_PUNCTUATION, "");
  const capitalised = stripped.charAt(0).toUpperCase() + stripped.slice(1);
  return clip(capitalised, maxChars);
}

/**
 * Next steps from the assistant's last reply: its numbered items and its sentences with a
 * next-step cue (chatter left out), and a question it ended with, which waits for the user.
 */
function nextStepsOf(reply: string, maxChars: number): string[] {
  const steps = new ItemList({ repeat: "first", caseless: true });
  const lines = proseLines(reply);
  for (const line of lines) {
    if (line.list === "numbered") {
      steps.add(clip(collapseWhitespace(line.text), maxChars));
      continue;
    }
    for (const sentence of splitSentences(line.text)) {
      if (!NEXT_STEP_CUE.test(sentence) || !looksLikeProse(sentence) || sentence.trim().endsWith("?")) continue;
      const text = CHATTY_LEAD_IN.test(sentence) ? progressItem(sentence, maxChars) : clip(collapseWhitespace(sentence), maxChars);
      if (!REACTION_OPENER.test(text) && text.split(/\s+/).length >= MIN_STATEMENT_WORDS) steps.add(text);
    }
  }
  const last = lines[lines.length - 1];
  const question = last === undefined ? undefined : splitSentences(last.text).filter((s) => s.trim().endsWith("?")).pop();
  if (question !== undefined && looksLikeProse(question)) steps.add(clip(`${AWAITING_PREFIX}${collapseWhitespace(question)}`, maxChars));
  return steps.values();
}

/** Next-step item for a question the assistant's last reply ended with. */
export const AWAITING_PREFIX = "Awaiting the user's answer: ";

/** The text values of a tool call's arguments (one level deep), or the arguments when they are text. */
function argumentTexts(args: unknown): string[] {
  if (typeof args === "string") return [args];
  if (typeof args !== "object" || args === null) return [];
  return Object.values(args).filter((value): value is string => typeof value === "string");
}
