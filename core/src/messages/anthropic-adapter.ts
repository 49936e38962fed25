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
  mapArgumentStrings,
  mapTextContent,
  withoutBlocks,
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

/**
 * The summary the API writes when server-side compaction (`compact_20260112`) runs: it leads the
 * assistant response, and the API drops every block before it on later requests. `content` is
 * null when that compaction failed.
 */
export interface AnthropicCompactionBlock {
  type: "compaction";
  content: string | null;
}

/** A call of a tool the API runs itself (`web_search`, `web_fetch`, `code_execution`, ...). */
export interface AnthropicServerToolUseBlock {
  type: "server_tool_use";
  id: string;
  name: string;
  input: unknown;
}

/**
 * The result of a server tool call, in the same assistant response (`web_search_tool_result`,
 * `web_fetch_tool_result`, `code_execution_tool_result`, `bash_code_execution_tool_result`,
 * `text_editor_code_execution_tool_result`, `tool_search_tool_result`, ...). Its `content` is the
 * tool's own shape; the adapter reads its text, output, titles and URLs.
 */
export interface AnthropicServerToolResultBlock {
  type: `${string}_tool_result`;
  tool_use_id: string;
  content: unknown;
}

/** A call of a tool on a remote MCP server (the MCP connector). */
export interface AnthropicMCPToolUseBlock {
  type: "mcp_tool_use";
  id: string;
  name: string;
  server_name: string;
  input: unknown;
}

/** The MCP server's answer, in the same assistant response. */
export interface AnthropicMCPToolResultBlock {
  type: "mcp_tool_result";
  tool_use_id: string;
  content: string | AnthropicTextBlock[];
  is_error?: boolean;
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicCompactionBlock
  | AnthropicServerToolUseBlock
  | AnthropicServerToolResultBlock
  | AnthropicMCPToolUseBlock
  | AnthropicMCPToolResultBlock;

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
  /** The `content` of the message's server compaction block, when it has one that succeeded. */
  compaction: string | undefined;
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
    compaction: undefined,
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
      case "tool_use":
      case "server_tool_use":
      case "mcp_tool_use": {
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
      case "compaction": {
        const summary = readString(block, "content");
        if (summary !== undefined) reading.compaction = summary;
        break;
      }
      default:
        if (isServerToolResult(block)) {
          // A server or MCP tool's result, answered inside the assistant response that called it.
          const id = readString(block, "tool_use_id");
          if (id !== undefined) reading.toolResultIds.push(id);
          mapServerResultText(block["content"], (text) => {
            reading.texts.push(text);
            return text;
          });
        }
    }
  }
  return reading;
}

/** `mcp_tool_result` and the `*_tool_result` blocks of server tools (not the client's `tool_result`). */
function isServerToolResult(block: Fields): boolean {
  const type = block["type"];
  return typeof type === "string" && type !== "tool_result" && type.endsWith("_tool_result");
}

/** Keys of a server tool result's content that hold readable text (never encrypted or base64 data). */
const SERVER_RESULT_TEXT_KEYS = new Set(["text", "stdout", "stderr", "title", "url", "error_code", "tool_name"]);
/** Keys a server tool result nests its content under. */
const SERVER_RESULT_NESTED_KEYS = new Set(["content", "source", "tool_references"]);

/**
 * A server tool result's content with each readable piece replaced by `rewrite(piece)`, in
 * document order: strings (an MCP result's string content), text blocks, command output,
 * search-result titles and URLs, error codes, the text of a fetched text document. Encrypted
 * content, base64 data, ids and numbers are kept as they are. Reading is this with a rewrite
 * that collects.
 */
function mapServerResultText(value: unknown, rewrite: (text: string) => string): unknown {
  if (typeof value === "string") return rewrite(value);
  if (Array.isArray(value)) return (value as unknown[]).map((item) => mapServerResultText(item, rewrite));
  if (!isFields(value)) return value;
  const copy: Record<string, unknown> = { ...value };
  const isTextSource = value["type"] === "text" && typeof value["data"] === "string";
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner === "string") {
      if (SERVER_RESULT_TEXT_KEYS.has(key) || (key === "data" && isTextSource) || (key === "content" && value["type"] !== undefined)) {
        copy[key] = rewrite(inner);
      }
    } else if (SERVER_RESULT_NESTED_KEYS.has(key)) {
      copy[key] = mapServerResultText(inner, rewrite);
    }
  }
  return copy;
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
  if (reading.compaction !== undefined) {
    // Anthropic's server-side compaction: the API drops everything before this block, so the
    // message stands for the history before it. What the response says after it is kept with it.
    return buildFacts({
      ...common,
      kind: "summary",
      text: joinText([reading.compaction, text]),
      thinking: joinText(reading.thoughts),
      toolCalls: reading.toolCalls,
      toolResultIds: reading.toolResultIds,
      imageCount: reading.imageCount,
    });
  }
  if (role === "assistant") {
    return buildFacts({
      ...common,
      kind: "assistant",
      text,
      thinking: joinText(reading.thoughts),
      toolCalls: reading.toolCalls,
      toolResultIds: reading.toolResultIds,
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
 *
 * Anthropic's own blocks: a message with a `compaction` block (server-side compaction,
 * `compact_20260112`) is a summary, its text the block's `content` followed by the rest of the
 * response (a failed one, `content: null`, is ignored). `server_tool_use` and `mcp_tool_use` are
 * tool calls and their `*_tool_result` / `mcp_tool_result` blocks answer them, usually inside the
 * same assistant message: the pair is never split, and a result in a later message (a paused
 * turn continued) stays with its call. Their readable output (text, stdout/stderr, titles, URLs,
 * fetched text, error codes) is text; encrypted content is not.
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
        if (block["type"] === "compaction" && typeof block["content"] === "string") return { ...block, content: rewrite(block["content"]) };
        if (isServerToolResult(block)) return { ...block, content: mapServerResultText(block["content"], rewrite) };
        return block;
      });
      return { ...message, content: blocks as AnthropicContentBlock[] };
    },
    dropThinking(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const content = withoutBlocks(fields["content"], "thinking", "redacted_thinking");
      return content === fields["content"] ? message : { ...message, content: content as AnthropicContentBlock[] };
    },
    markCacheBreakpoint(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const content = fields["content"];
      const blocks: unknown[] = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? [...content] : [];
      // Thinking blocks cannot carry cache_control: the breakpoint goes on the last block that can.
      for (let i = blocks.length - 1; i >= 0; i--) {
        const block = blocks[i];
        if (!isFields(block) || block["type"] === "thinking" || block["type"] === "redacted_thinking") continue;
        blocks[i] = { ...block, cache_control: { type: "ephemeral" } };
        return { ...message, content: blocks as AnthropicContentBlock[] };
      }
      return message;
    },
    mapToolArguments(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (!Array.isArray(fields["content"])) return message;
      const blocks = (fields["content"] as unknown[]).map((block) =>
        isFields(block) && TOOL_USE_TYPES.has(block["type"]) && block["input"] !== undefined
          ? { ...block, input: mapArgumentStrings(block["input"], rewrite) }
          : block,
      );
      return { ...message, content: blocks as AnthropicContentBlock[] };
    },
  };
}

/** Blocks that carry a tool call's arguments in `input`. */
const TOOL_USE_TYPES: ReadonlySet<unknown> = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);
