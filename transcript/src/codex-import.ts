/**
 * Read-only import of Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as
 * OpenAI Chat Completions messages, so status, inspect, export and compact --dry-run work on them.
 *
 * Format, from openai/codex (codex-rs/protocol/src/protocol.rs `RolloutLine`, `RolloutItem`,
 * `CompactedItem`; codex-rs/protocol/src/models.rs `ResponseItem`, `ContentItem`,
 * `FunctionCallOutputPayload`): each line is `{ timestamp, type, payload }` with `type` one of
 * `session_meta`, `response_item`, `compacted`, `turn_context`, `event_msg`. Rollouts written
 * before September 2025 have a bare `{ id, timestamp, instructions }` first line, response items
 * at the top level and `{ "record_type": "state" }` markers; both are read.
 *
 * The context is rebuilt as Codex rebuilds it on resume (codex-rs/core/src/codex.rs,
 * `apply_rollout_item_to_history`): response items in order; a `compacted` line with
 * `replacement_history` replaces everything before it; one without keeps the session's setup
 * messages and the latest real user messages (up to about 20,000 tokens, at 4 characters a token,
 * as `build_compacted_history` in compact.rs; Codex truncates the one that crosses the budget, we
 * leave it out) followed by the summary; a `thread_rolled_back` event drops the last n user turns.
 *
 * The item readers (content parts, reasoning text, tool outputs and their failure) are the core's
 * (`readResponsesOutput`, `responsesReasoningTexts`), shared with its Responses adapter.
 *
 * Mapping: `message` -> a message of its role (`developer` kept as `developer`); `function_call`,
 * `custom_tool_call` and `local_shell_call` -> `tool_calls` on the assistant message they follow
 * (or a new one with null content); `function_call_output` / `custom_tool_call_output` -> a
 * `tool` message (`isError` when the output says `success: false` or a non-zero exit code);
 * `reasoning` summaries -> `reasoning_content` of the next assistant message. Outputs whose call
 * is not in the context are left out, as Codex drops them; web searches, snapshots and encrypted
 * compaction items carry nothing readable and are counted in `ignoredItems`.
 *
 * Usage (see codex-token-count.ts): each new `token_count` event's `last_token_usage` becomes the
 * `usage` of the reply of the model call it reports, so the context is measured as the provider
 * counted it (its newest figure plus counts of what came after, as for pi). That reply is the
 * newest assistant message between the same two input items (a user or developer message, a tool
 * output) as the event: CLI 0.47 writes the event before the call's items, later versions after
 * them, both before the outputs of the calls it made. The newest `model_context_window` stated
 * (on `token_count` or `task_started`) is the session's window.
 */
import {
  createOpenAIAdapter,
  readResponsesOutput,
  responsesReasoningTexts,
  type OpenAIAssistantMessage,
  type OpenAIChatMessage,
  type OpenAIImagePart,
  type OpenAITextPart,
  type OpenAIToolMessage,
} from "@compaction/core";
import { type ImportOptions, readJsonObjectLines } from "./claude-code-import.js";
import { type CodexChatUsage, type IgnoredFigure, isUsageEvent, UsageEvents } from "./codex-token-count.js";
import type { SkippedLine } from "./types.js";

export type { IgnoredFigure } from "./codex-token-count.js";

export interface CodexRolloutImport {
  readonly path: string;
  /** The session (thread) id from the first `session_meta` line. */
  readonly sessionId?: string;
  readonly cwd?: string;
  readonly cliVersion?: string;
  /** The model of the latest `turn_context`. */
  readonly model?: string;
  /**
   * The model's context window in tokens, as Codex last stated it (`model_context_window` of a
   * `token_count` or `task_started` event), when it did.
   */
  readonly contextWindow?: number;
  /** The context as OpenAI Chat messages, with `timestamp` in ms where the line has one. */
  readonly messages: OpenAIChatMessage[];
  /** 1-based line number of the item each message starts at (a summary: its `compacted` line). */
  readonly lines: number[];
  /** `compacted` lines applied. */
  readonly compactions: number;
  /** Response items with nothing to read (web searches, snapshots, encrypted items, orphaned outputs). */
  readonly ignoredItems: number;
  /** Usage figures and windows on event lines that could not be read (the lines are read otherwise), with why. */
  readonly ignoredFigures: IgnoredFigure[];
  readonly skipped: SkippedLine[];
  readonly incompleteTail: boolean;
}

/** `COMPACT_USER_MESSAGE_MAX_TOKENS` in codex-rs/core/src/compact.rs. */
const COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000;
const RESPONSE_ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "web_search_call",
  "ghost_snapshot",
  "compaction",
  "compaction_summary",
]);
/** User messages Codex writes itself at the start of a session (not user turns). */
const SESSION_PREFIX_MARKERS = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions"];

type Fields = Record<string, unknown>;

interface Slot {
  readonly message: OpenAIChatMessage;
  readonly line: number;
}

/** Reads a Codex CLI rollout's context. See the module comment for the rules. */
export function importCodexRollout(path: string, options: ImportOptions = {}): CodexRolloutImport {
  const { lines, skipped, incompleteTail } = readJsonObjectLines(path, options);
  const state = new ContextBuilder();
  let info: { sessionId?: string; cwd?: string; cliVersion?: string } | undefined;
  let model: string | undefined;
  const events = new UsageEvents();

  lines.forEach(({ line, value }, index) => {
    const type = value["type"];
    const payload = isFields(value["payload"]) ? value["payload"] : undefined;
    const time = typeof value["timestamp"] === "string" ? Date.parse(value["timestamp"]) : Number.NaN;
    const timestamp = Number.isNaN(time) ? undefined : time;
    if (payload !== undefined && typeof type === "string") {
      if (type === "session_meta") info ??= metaInfo(payload);
      else if (type === "turn_context" && typeof payload["model"] === "string") model = payload["model"];
      else if (type === "response_item") state.add(payload, line, timestamp);
      else if (type === "compacted") state.compact(payload, line, timestamp);
      else if (type === "event_msg" && payload["type"] === "thread_rolled_back") state.rollBack(Number(payload["num_turns"] ?? 0));
      else if (type === "event_msg" && isUsageEvent(payload)) state.usage(events.read(payload, line));
      return;
    }
    // Rollouts before September 2025: a bare meta line first, then bare response items.
    if (typeof type === "string" && RESPONSE_ITEM_TYPES.has(type)) state.add(value, line, undefined);
    else if (index === 0 && type === undefined && typeof value["id"] === "string") info ??= metaInfo(value);
  });

  return {
    path,
    ...info,
    ...(model === undefined ? {} : { model }),
    ...(events.contextWindow === undefined ? {} : { contextWindow: events.contextWindow }),
    messages: state.slots.map((slot) => slot.message),
    lines: state.slots.map((slot) => slot.line),
    compactions: state.compactions,
    ignoredItems: state.ignoredItems,
    ignoredFigures: events.ignored,
    skipped,
    incompleteTail,
  };
}

function metaInfo(meta: Fields): { sessionId?: string; cwd?: string; cliVersion?: string } {
  const info: { sessionId?: string; cwd?: string; cliVersion?: string } = {};
  if (typeof meta["id"] === "string") info.sessionId = meta["id"];
  if (typeof meta["cwd"] === "string") info.cwd = meta["cwd"];
  if (typeof meta["cli_version"] === "string") info.cliVersion = meta["cli_version"];
  return info;
}

/** The Chat context being rebuilt, item by item. */
class ContextBuilder {
  slots: Slot[] = [];
  compactions = 0;
  ignoredItems = 0;
  /** The assistant message later calls join, until something else comes between. */
  #openAssistant: OpenAIAssistantMessage | undefined;
  #pendingReasoning: string[] = [];
  readonly #calledIds = new Set<string>();
  /** The newest assistant message since the last input item: the reply a usage figure in the same span belongs to. */
  #spanReply: OpenAIAssistantMessage | undefined;
  /** The newest new usage figure since the last input item (waiting for its reply when the event came first). */
  #spanUsage: CodexChatUsage | undefined;

  add(item: Fields, line: number, timestamp: number | undefined): void {
    switch (item["type"]) {
      case "message":
        return this.#message(item, line, timestamp);
      case "reasoning":
        this.#pendingReasoning.push(...responsesReasoningTexts(item));
        return;
      case "function_call":
        return this.#call(String(item["call_id"] ?? ""), String(item["name"] ?? ""), stringArgument(item["arguments"]), line, timestamp);
      case "custom_tool_call":
        return this.#call(String(item["call_id"] ?? ""), String(item["name"] ?? ""), stringArgument(item["input"]), line, timestamp);
      case "local_shell_call":
        return this.#call(String(item["call_id"] ?? item["id"] ?? ""), "local_shell", JSON.stringify(item["action"] ?? {}), line, timestamp);
      case "function_call_output":
      case "custom_tool_call_output":
        return this.#output(item, line, timestamp);
      default:
        this.ignoredItems += 1;
    }
  }

  compact(item: Fields, line: number, timestamp: number | undefined): void {
    this.compactions += 1;
    const replacement = item["replacement_history"];
    const before = this.slots;
    this.#reset();
    if (Array.isArray(replacement)) {
      for (const replaced of replacement) if (isFields(replaced)) this.add(replaced, line, timestamp);
      // The replayed history's replies are not the calls later events report.
      this.#input();
      return;
    }
    const setup = before.filter((slot) => isSetupMessage(slot.message));
    this.slots.push(...setup, ...recentUserMessages(before));
    const summary = createOpenAIAdapter().createSummary(String(item["message"] ?? ""), timestamp === undefined ? {} : { timestamp });
    this.slots.push({ message: summary, line });
    this.#input();
  }

  /**
   * A new model call's usage: on the span's reply, or on the next one when the event came before
   * the call's items. A later figure in the same span describes more of it, so it wins.
   */
  usage(usage: CodexChatUsage | undefined): void {
    if (usage === undefined) return;
    this.#spanUsage = usage;
    if (this.#spanReply !== undefined) this.#spanReply.usage = { ...usage };
  }

  /** Drops the last `turns` user turns (from the nth-last real user message on), as Codex does. */
  rollBack(turns: number): void {
    if (!(turns > 0)) return;
    this.#input();
    const userIndexes = this.slots.flatMap((slot, index) => (isUserTurn(slot.message) ? [index] : []));
    const cut = userIndexes.length >= turns ? userIndexes[userIndexes.length - turns] : userIndexes[0];
    if (cut === undefined) return;
    this.slots = this.slots.slice(0, cut);
    this.#openAssistant = undefined;
  }

  #reset(): void {
    this.slots = [];
    this.#openAssistant = undefined;
    this.#pendingReasoning = [];
    this.#calledIds.clear();
    this.#input();
  }

  /** An input item (or a compaction, a rollback) ends the span of a model call. */
  #input(): void {
    this.#spanReply = undefined;
    this.#spanUsage = undefined;
  }

  /** A new assistant message: the span's reply now, taking its usage figure from an older one. */
  #reply(message: OpenAIAssistantMessage): void {
    if (this.#spanReply !== undefined) delete this.#spanReply.usage;
    this.#spanReply = message;
    if (this.#spanUsage !== undefined) message.usage = { ...this.#spanUsage };
  }

  #push(message: OpenAIChatMessage, line: number, timestamp: number | undefined): void {
    if (timestamp !== undefined) message.timestamp = timestamp;
    this.slots.push({ message, line });
  }

  #message(item: Fields, line: number, timestamp: number | undefined): void {
    const role = item["role"];
    const parts = contentParts(item["content"]);
    this.#openAssistant = undefined;
    if (role === "assistant") {
      const message: OpenAIAssistantMessage = { role: "assistant", content: parts.map((part) => ("text" in part ? part.text : "")).join("") };
      this.#takeReasoning(message);
      this.#openAssistant = message;
      this.#reply(message);
      this.#push(message, line, timestamp);
      return;
    }
    this.#input();
    const texts = parts.filter((part): part is OpenAITextPart => part.type === "text");
    if (role === "system" || role === "developer") this.#push({ role, content: texts }, line, timestamp);
    else this.#push({ role: "user", content: parts }, line, timestamp);
  }

  #call(id: string, name: string, args: string, line: number, timestamp: number | undefined): void {
    let assistant = this.#openAssistant;
    if (assistant === undefined) {
      assistant = { role: "assistant", content: null };
      this.#openAssistant = assistant;
      this.#reply(assistant);
      this.#push(assistant, line, timestamp);
    }
    this.#takeReasoning(assistant);
    (assistant.tool_calls ??= []).push({ id, type: "function", function: { name, arguments: args } });
    this.#calledIds.add(id);
  }

  #output(item: Fields, line: number, timestamp: number | undefined): void {
    const id = String(item["call_id"] ?? "");
    this.#input();
    if (!this.#calledIds.has(id)) {
      this.ignoredItems += 1;
      return;
    }
    this.#openAssistant = undefined;
    const { text, isError } = readResponsesOutput(item["output"], { imagePlaceholder: "[image]" });
    const message: OpenAIToolMessage = { role: "tool", tool_call_id: id, content: text };
    if (isError) message.isError = true;
    this.#push(message, line, timestamp);
  }

  #takeReasoning(message: OpenAIAssistantMessage): void {
    if (this.#pendingReasoning.length === 0) return;
    const text = this.#pendingReasoning.join("\n\n");
    message.reasoning_content = message.reasoning_content ? `${message.reasoning_content}\n\n${text}` : text;
    this.#pendingReasoning = [];
  }
}

function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringArgument(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? {});
}

/** `input_text` / `output_text` -> text parts, `input_image` -> image parts. */
function contentParts(content: unknown): (OpenAITextPart | OpenAIImagePart)[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const parts: (OpenAITextPart | OpenAIImagePart)[] = [];
  for (const item of content) {
    if (!isFields(item)) continue;
    if ((item["type"] === "input_text" || item["type"] === "output_text" || item["type"] === "text") && typeof item["text"] === "string") {
      parts.push({ type: "text", text: item["text"] });
    } else if (item["type"] === "input_image" && typeof item["image_url"] === "string") {
      parts.push({ type: "image_url", image_url: { url: item["image_url"] } });
    }
  }
  return parts;
}

function userText(message: OpenAIChatMessage): string | undefined {
  if (message.role !== "user") return undefined;
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function isSetupMessage(message: OpenAIChatMessage): boolean {
  if (message.role === "system" || message.role === "developer") return true;
  const text = userText(message);
  return text !== undefined && SESSION_PREFIX_MARKERS.some((marker) => text.trimStart().startsWith(marker));
}

/** A user message the user typed (not setup text, not a summary). */
function isUserTurn(message: OpenAIChatMessage): boolean {
  return message.role === "user" && message.name === undefined && !isSetupMessage(message);
}

/** The newest user turns that fit Codex's budget for a compaction without a replacement history, oldest first. */
function recentUserMessages(slots: readonly Slot[]): Slot[] {
  const kept: Slot[] = [];
  let remaining = COMPACT_USER_MESSAGE_MAX_TOKENS;
  for (let i = slots.length - 1; i >= 0 && remaining > 0; i--) {
    const slot = slots[i] as Slot;
    if (!isUserTurn(slot.message)) continue;
    const tokens = Math.ceil((userText(slot.message) ?? "").length / 4);
    if (tokens > remaining) break;
    kept.push(slot);
    remaining -= tokens;
  }
  return kept.reverse();
}
