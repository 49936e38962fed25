/**
 * One linear pass over a list of MessageFacts that pulls out what a summary keeps: requests,
 * constraints, progress, decisions, files, commands, failures, identifiers and next steps.
 * Works on facts only, so any message format works.
 */
import type { MessageFacts } from "../messages/adapter.js";
import {
  CONSTRAINT_CUE,
  DECISION_CUE,
  ERROR_LINE,
  FILLER_SENTENCE,
  INTENT_LEAD_IN,
  NEXT_STEP_CUE,
  NOT_A_CONSTRAINT,
  SLASH_COMMAND,
  TRAILING_PUNCTUATION,
} from "./cues.js";
import { collectIdentifiers } from "./identifiers.js";
import { ItemList } from "./item-list.js";
import { readToolCall } from "./tool-calls.js";
import {
  clip,
  collapseWhitespace,
  firstNonBlankLine,
  looksLikeProse,
  proseLines,
  proseSentences,
  splitSentences,
} from "./text.js";

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

interface ProgressEntry {
  readonly text: string;
  readonly messageIndex: number;
  readonly callIds: readonly string[];
  readonly intent: boolean;
}

type WorkEvent = { readonly progress: ProgressEntry } | { readonly toolDone: string };

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
  const events: WorkEvent[] = [];
  const issued = new Set<string>();
  const constraints = prose();
  const decisions = prose();
  const filesRead = exact();
  const filesModified = exact();
  const commands = exact();
  const failed = exact();
  const identifiers = exact();
  const completed = exact();
  const addIdentifier = (identifier: string): void => identifiers.add(identifier);
  let lastReplyIndex = -1;
  let lastReplyText = "";

  const readUser = (facts: MessageFacts, index: number): void => {
    const text = facts.text.trim();
    if (text.length === 0 || SLASH_COMMAND.test(text)) return;
    if (lastReplyIndex === -1 && firstRequests.length < MAX_FIRST_REQUESTS) {
      firstRequests.push(item(text));
      firstRequestIndexes.add(index);
    }
    asks.push({ index, text: item(text) });
    for (const sentence of proseSentences(text)) {
      if (!looksLikeProse(sentence)) continue;
      if (isConstraint(sentence)) constraints.add(item(sentence));
      if (DECISION_CUE.test(sentence)) decisions.add(item(sentence));
    }
    collectIdentifiers(text, addIdentifier);
  };

  const readAssistantText = (facts: MessageFacts, index: number, text: string): void => {
    lastReplyIndex = index;
    lastReplyText = text;
    const sentences = proseSentences(text);
    const statement = sentences.find(isStatement);
    if (statement !== undefined) {
      const progress = progressItem(statement, options.maxItemChars);
      if (progress.length > 0) {
        const callIds = facts.toolCalls.map((call) => call.id);
        events.push({ progress: { text: progress, messageIndex: index, callIds, intent: INTENT_LEAD_IN.test(statement) } });
      }
    }
    for (const sentence of sentences) {
      if (looksLikeProse(sentence) && DECISION_CUE.test(sentence)) decisions.add(item(sentence));
    }
    collectIdentifiers(text, addIdentifier);
  };

  const readToolCalls = (facts: MessageFacts): void => {
    for (const call of facts.toolCalls) {
      issued.add(call.id);
      const reading = readToolCall(call);
      const status = statusOf(call.id);
      switch (reading.kind) {
        case "read":
          if (status !== "failed") for (const path of reading.paths) filesRead.add(path);
          break;
        case "modify":
          if (status === "failed") break;
          for (const path of reading.paths) {
            filesModified.add(path);
            if (status === "ok") {
              events.push({ toolDone: `${reading.verb} ${path}` });
              completed.add(path);
            }
          }
          break;
        case "command":
          commands.add(item(reading.command ?? reading.argsSummary));
          if (status === "ok") completed.add(item(reading.command ?? reading.argsSummary));
          collectIdentifiers(reading.command ?? "", addIdentifier);
          break;
        case "other":
          commands.add(item(`${reading.name}(${reading.argsSummary})`));
          break;
      }
      const result = results.get(call.id);
      if (status === "failed" && result !== undefined) {
        const name = result.toolName ?? reading.name;
        const args = clip(collapseWhitespace(reading.argsSummary), FAILED_ARGS_CHARS);
        failed.add(item(`${name}(${args}): ${errorLine(result.text)}`));
      }
    }
  };

  const readOrphanResult = (facts: MessageFacts): void => {
    if (!facts.isError || facts.toolResultIds.some((id) => issued.has(id))) return;
    failed.add(item(`${facts.toolName ?? "tool"}: ${errorLine(facts.text)}`));
  };

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
        if (text.length > 0) readAssistantText(facts, index, text);
        readToolCalls(facts);
        break;
      }
      case "toolResult":
        readOrphanResult(facts);
        break;
      default:
        break;
    }
  });

  const done = new ItemList({ repeat: "latest", caseless: true });
  const inProgress = new ItemList({ repeat: "first", caseless: true });
  for (const event of events) {
    if ("toolDone" in event) {
      done.add(event.toolDone);
      continue;
    }
    const entry = event.progress;
    const statuses = entry.callIds.map(statusOf);
    const isLast = entry.messageIndex === lastReplyIndex;
    const unfinished =
      statuses.includes("pending") ||
      (isLast && (statuses.includes("failed") || (entry.callIds.length === 0 && entry.intent)));
    if (unfinished) inProgress.add(entry.text);
    else done.add(entry.text);
  }
  for (const text of inProgress.values()) done.delete(text);

  return {
    firstRequests,
    pendingAsks: asks.filter((ask) => ask.index > lastReplyIndex && !firstRequestIndexes.has(ask.index)).map((ask) => ask.text),
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

/** Characters of a failed call's output searched for the line that names the error. */
const ERROR_SEARCH_CHARS = 4000;
/** Fewest words of an assistant sentence that can stand as a progress item. */
const MIN_STATEMENT_WORDS = 3;

/** A user sentence stating a constraint: a cue word, not a question, not "I don't think". */
function isConstraint(sentence: string): boolean {
  return CONSTRAINT_CUE.test(sentence) && !sentence.endsWith("?") && !NOT_A_CONSTRAINT.test(sentence);
}

/** An assistant sentence that can stand as a progress item: not filler, at least three words. */
function isStatement(sentence: string): boolean {
  if (FILLER_SENTENCE.test(sentence)) return false;
  return sentence.trim().split(/\s+/, MIN_STATEMENT_WORDS).length >= MIN_STATEMENT_WORDS;
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

/** Numbered list items and sentences with a next-step cue in the assistant's last reply. */
function nextStepsOf(reply: string, maxChars: number): string[] {
  const steps = new ItemList({ repeat: "first", caseless: true });
  for (const line of proseLines(reply)) {
    if (line.list === "numbered") {
      steps.add(clip(collapseWhitespace(line.text), maxChars));
      continue;
    }
    for (const sentence of splitSentences(line.text)) {
      if (NEXT_STEP_CUE.test(sentence) && looksLikeProse(sentence)) steps.add(clip(collapseWhitespace(sentence), maxChars));
    }
  }
  return steps.values();
}
