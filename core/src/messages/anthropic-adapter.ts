/**
 * Adapter for Anthropic Messages API messages (and the `message` objects of Claude Code
 * transcripts, which add `usage`, `id` and `isCompactSummary`).
 *
 * The API requires user and assistant turns to alternate. Summaries and notes are `user`
 * messages and tool results are `user` messages too, so a compacted list can hold adjacent user
 * messages: hosts whose API call needs strict alternation merge adjacent user messages (concatenate
 * their content blocks) before sending. The marker property `compaction` that tells summaries and
 * notes apart is not part of the API either; strip it (with `pinned`, `timestamp`, `usage`) before
 * sending.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import type { AdapterOptions, MessageAdapter, MessageFacts, ToolCallInfo } from "./adapter.js";
import {
  type Fields,
  buildFacts,
  describeValue,
  isFields,
  joinText,
  mapTextContent,
  positiveTotal,
  readCount,
  readString,
  readTimestamp,
  requireMessageObject,
  unwrapSummary,
  wrapSummary,
} from "./message-fields.js";

export interface AnthropicTextBlock {
  type: "text";
  text: string;
}

export interface AnthropicImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | (AnthropicTextBlock | AnthropicImageBlock)[];
  is_error?: boolean;
}

export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/** Usage as the API returns it (and Claude Code stores it on assistant messages). */
export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicContentBlock[];
  /** The response id (`msg_…`) of an assistant message, when the host kept it. */
  id?: string;
  usage?: AnthropicUsage;
  /** Claude Code marks the user message that carries its own compaction summary. */
  isCompactSummary?: boolean;
  /** Marks the summaries and notes this adapter creates. Not part of the API. */
  compaction?: "summary" | "note";
  /** Milliseconds since the epoch, or an ISO 8601 string. Not part of the API. */
  timestamp?: number | string;
  /** Pinned messages are never dropped, pruned or summarised. Not part of the API. */
  pinned?: boolean;
}

const ADAPTER_NAME = "anthropic";

interface BlocksReading {
  texts: string[];
  thoughts: string[];
  toolCalls: ToolCallInfo[];
  toolResultIds: string[];
  hasToolResult: boolean;
  isError: boolean;
  imageCount: number;
}

/** Reads the text and images inside one tool_result block. */
function readToolResultContent(content: unknown, reading: BlocksReading): void {
  if (typeof content === "string") {
    reading.texts.push(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const inner of content as unknown[]) {
    if (!isFields(inner)) continue;
    if (inner["type"] === "text") reading.texts.push(readString(inner, "text") ?? "");
    else if (inner["type"] === "image") reading.imageCount += 1;
  }
}

function readBlocks(content: unknown): BlocksReading {
  const reading: BlocksReading = {
    texts: [],
    thoughts: [],
    toolCalls: [],
    toolResultIds: [],
    hasToolResult: false,
    isError: false,
    imageCount: 0,
  };
  if (typeof content === "string") {
    reading.texts.push(content);
    return reading;
  }
  if (!Array.isArray(content)) return reading;
  for (const block of content as unknown[]) {
    if (!isFields(block)) continue;
    switch (block["type"]) {
      case "text":
        reading.texts.push(readString(block, "text") ?? "");
        break;
      case "thinking":
        reading.thoughts.push(readString(block, "thinking") ?? "");
        break;
      case "image":
        reading.imageCount += 1;
        break;
      case "tool_use": {
        const id = readString(block, "id");
        if (id !== undefined) reading.toolCalls.push({ id, name: readString(block, "name") ?? "", arguments: block["input"] });
        break;
      }
      case "tool_result": {
        reading.hasToolResult = true;
        const id = readString(block, "tool_use_id");
        if (id !== undefined) reading.toolResultIds.push(id);
        if (block["is_error"] === true) reading.isError = true;
        readToolResultContent(block["content"], reading);
        break;
      }
    }
  }
  return reading;
}

/** Whole-context figure: every input token (cached or not) plus the response's output. */
function readUsageContextTokens(message: Fields): number | undefined {
  const usage = message["usage"];
  if (!isFields(usage)) return undefined;
  return positiveTotal(
    readCount(usage, "input_tokens") +
      readCount(usage, "cache_creation_input_tokens") +
      readCount(usage, "cache_read_input_tokens") +
      readCount(usage, "output_tokens"),
  );
}

function readAnthropicFacts(message: Fields, pinned: boolean): MessageFacts {
  const common = { timestamp: readTimestamp(message), id: readString(message, "id"), pinned };
  const role = message["role"];
  if (role !== "user" && role !== "assistant") return buildFacts({ ...common, kind: "other" });
  const reading = readBlocks(message["content"]);
  const text = joinText(reading.texts);
  if (role === "assistant") {
    return buildFacts({
      ...common,
      kind: "assistant",
      text,
      thinking: joinText(reading.thoughts),
      toolCalls: reading.toolCalls,
      imageCount: reading.imageCount,
      usageContextTokens: readUsageContextTokens(message),
    });
  }
  if (reading.hasToolResult) {
    return buildFacts({
      ...common,
      kind: "toolResult",
      text,
      toolResultIds: reading.toolResultIds,
      isError: reading.isError,
      imageCount: reading.imageCount,
    });
  }
  if (message["compaction"] === "summary" || message["isCompactSummary"] === true) {
    return buildFacts({ ...common, kind: "summary", text: unwrapSummary(text) });
  }
  const kind = message["compaction"] === "note" ? "other" : "user";
  return buildFacts({ ...common, kind, text, imageCount: reading.imageCount });
}

/**
 * The adapter for Anthropic Messages. A user message holding any `tool_result` block is a tool
 * result (answering all its `tool_use_id`s). Summaries and notes are user messages marked with
 * `compaction: "summary" | "note"`; Claude Code's `isCompactSummary` messages read as summaries.
 */
export function createAnthropicAdapter(
  options: AdapterOptions<AnthropicMessage> = {},
): MessageAdapter<AnthropicMessage> {
  const isPinned = options.isPinned;
  return {
    name: ADAPTER_NAME,
    readFacts(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      return readAnthropicFacts(fields, isPinned ? isPinned(message) : fields["pinned"] === true);
    },
    createSummary(text, summaryOptions = {}) {
      const summary: AnthropicMessage = {
        role: "user",
        content: [{ type: "text", text: wrapSummary(text) }],
        compaction: "summary",
      };
      if (summaryOptions.timestamp !== undefined) summary.timestamp = summaryOptions.timestamp;
      return summary;
    },
    createNote(text, noteOptions = {}) {
      const note: AnthropicMessage = { role: "user", content: [{ type: "text", text }], compaction: "note" };
      if (noteOptions.timestamp !== undefined) note.timestamp = noteOptions.timestamp;
      return note;
    },
    replaceToolOutput(message, replacement) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const content = fields["content"];
      const hasResult =
        fields["role"] === "user" &&
        Array.isArray(content) &&
        (content as unknown[]).some((block) => isFields(block) && block["type"] === "tool_result");
      if (!hasResult) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The anthropic message adapter can only replace the output of a user message with tool_result blocks, but found ${fields["role"] === "user" ? "a user message without any" : `role ${describeValue(fields["role"])}`}.`,
          { hint: 'Call replaceToolOutput only on messages whose facts have kind "toolResult".' },
        );
      }
      // Each tool_result keeps its id and error flag; blocks beside them (user text) are kept.
      const blocks = (message.content as AnthropicContentBlock[]).map((block) =>
        isFields(block) && block.type === "tool_result" ? { ...block, content: replacement } : block,
      );
      return { ...message, content: blocks };
    },
    mapText(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const content = fields["content"];
      if (typeof content === "string") return { ...message, content: rewrite(content) };
      if (!Array.isArray(content)) return message;
      const blocks = (content as unknown[]).map((block) => {
        if (!isFields(block)) return block;
        if (block["type"] === "text" && typeof block["text"] === "string") return { ...block, text: rewrite(block["text"]) };
        if (block["type"] === "tool_result" && block["content"] !== undefined) {
          return { ...block, content: mapTextContent(block["content"], rewrite, "text") };
        }
        return block;
      });
      return { ...message, content: blocks as AnthropicContentBlock[] };
    },
  };
}
