/**
 * Adapter for OpenAI Chat Completions messages (`messages` of `POST /v1/chat/completions`).
 * Summaries and notes are `user` messages told apart by their `name`, which the API accepts on
 * user messages; a mid-conversation `system` message is not accepted by every compatible provider.
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
  positiveTotal,
  readCount,
  readString,
  readTimestamp,
  requireMessageObject,
  unwrapSummary,
  wrapSummary,
} from "./message-fields.js";

export interface OpenAITextPart {
  type: "text";
  text: string;
}

export interface OpenAIImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export interface OpenAIRefusalPart {
  type: "refusal";
  refusal: string;
}

/** Audio and file parts carry no text this engine can read; they are kept as they are. */
export interface OpenAIOtherPart {
  type: "input_audio" | "file";
  [key: string]: unknown;
}

export type OpenAIUserContentPart = OpenAITextPart | OpenAIImagePart | OpenAIOtherPart;

export interface OpenAIToolCall {
  id: string;
  type: "function";
  /** `arguments` is a JSON string, as the API sends it. */
  function: { name: string; arguments: string };
}

/** Fields a host may add for this project; strip them before sending if your provider is strict. */
interface OpenAIMessageExtras {
  /** Milliseconds since the epoch, or an ISO 8601 string. Not part of the API. */
  timestamp?: number | string;
  /** Pinned messages are never dropped, pruned or summarised. Not part of the API. */
  pinned?: boolean;
}

export interface OpenAISystemMessage extends OpenAIMessageExtras {
  role: "system" | "developer";
  content: string | OpenAITextPart[];
  name?: string;
}

export interface OpenAIUserMessage extends OpenAIMessageExtras {
  role: "user";
  content: string | OpenAIUserContentPart[];
  name?: string;
}

export interface OpenAIAssistantMessage extends OpenAIMessageExtras {
  role: "assistant";
  content?: string | (OpenAITextPart | OpenAIRefusalPart)[] | null;
  refusal?: string | null;
  tool_calls?: OpenAIToolCall[];
  /** Deprecated single call; it has no id, so it cannot be paired with its result. */
  function_call?: { name: string; arguments: string } | null;
  /** Reasoning text some compatible providers return (e.g. DeepSeek). */
  reasoning_content?: string | null;
  name?: string;
  /**
   * The response's usage, if the host stored it on the message (the Codex importer does). Not
   * part of the API. `total_tokens` (or prompt plus completion) becomes `usageContextTokens`;
   * the details are parts of those two (cached prompt tokens, reasoning tokens) and are not added.
   */
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  };
}

export interface OpenAIToolMessage extends OpenAIMessageExtras {
  role: "tool";
  tool_call_id: string;
  content: string | OpenAITextPart[];
  /**
   * Not part of the API (which has no error flag on tool messages): hosts that know a call
   * failed may set it so summaries and pruning markers can say so. Strip it before sending.
   */
  isError?: boolean;
}

/** Deprecated result of a `function_call`; it names the function but carries no call id. */
export interface OpenAIFunctionMessage extends OpenAIMessageExtras {
  role: "function";
  name: string;
  content: string | null;
}

export type OpenAIChatMessage =
  | OpenAISystemMessage
  | OpenAIUserMessage
  | OpenAIAssistantMessage
  | OpenAIToolMessage
  | OpenAIFunctionMessage;

/** `name` of the user message that carries a compaction summary. */
export const OPENAI_SUMMARY_NAME = "compaction_summary";
/** `name` of the user message that carries a compaction note. */
export const OPENAI_NOTE_NAME = "compaction_note";

const ADAPTER_NAME = "openai";

interface PartsReading {
  text: string;
  imageCount: number;
}

function readParts(content: unknown): PartsReading {
  if (typeof content === "string") return { text: content, imageCount: 0 };
  if (!Array.isArray(content)) return { text: "", imageCount: 0 };
  const texts: string[] = [];
  let imageCount = 0;
  for (const part of content as unknown[]) {
    if (!isFields(part)) continue;
    if (part["type"] === "text") texts.push(readString(part, "text") ?? "");
    else if (part["type"] === "refusal") texts.push(readString(part, "refusal") ?? "");
    else if (part["type"] === "image_url") imageCount += 1;
  }
  return { text: joinText(texts), imageCount };
}

/** Parses a JSON arguments string; keeps the raw string when it is not valid JSON. */
function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function readToolCalls(value: unknown): ToolCallInfo[] {
  if (!Array.isArray(value)) return [];
  const calls: ToolCallInfo[] = [];
  for (const call of value as unknown[]) {
    if (!isFields(call)) continue;
    const id = readString(call, "id");
    if (id === undefined) continue;
    const fn = call["function"];
    const custom = call["custom"];
    if (isFields(fn)) {
      calls.push({ id, name: readString(fn, "name") ?? "", arguments: parseArguments(fn["arguments"]) });
    } else if (isFields(custom)) {
      calls.push({ id, name: readString(custom, "name") ?? "", arguments: custom["input"] });
    } else {
      calls.push({ id, name: "", arguments: undefined });
    }
  }
  return calls;
}

function readUsageContextTokens(message: Fields): number | undefined {
  const usage = message["usage"];
  if (!isFields(usage)) return undefined;
  const total = readCount(usage, "total_tokens");
  if (total > 0) return total;
  return positiveTotal(readCount(usage, "prompt_tokens") + readCount(usage, "completion_tokens"));
}

function readOpenAIFacts(message: Fields, pinned: boolean): MessageFacts {
  const common = { timestamp: readTimestamp(message), id: readString(message, "id"), pinned };
  switch (message["role"]) {
    case "system":
    case "developer":
      return buildFacts({ ...common, kind: "system", text: readParts(message["content"]).text });
    case "user": {
      const { text, imageCount } = readParts(message["content"]);
      const name = message["name"];
      if (name === OPENAI_SUMMARY_NAME) {
        return buildFacts({ ...common, kind: "summary", text: unwrapSummary(text) });
      }
      return buildFacts({ ...common, kind: name === OPENAI_NOTE_NAME ? "other" : "user", text, imageCount });
    }
    case "assistant": {
      const refusal = readString(message, "refusal") ?? "";
      return buildFacts({
        ...common,
        kind: "assistant",
        text: joinText([readParts(message["content"]).text, refusal]),
        thinking: readString(message, "reasoning_content") ?? "",
        toolCalls: readToolCalls(message["tool_calls"]),
        usageContextTokens: readUsageContextTokens(message),
      });
    }
    case "tool": {
      const id = readString(message, "tool_call_id");
      return buildFacts({
        ...common,
        kind: "toolResult",
        text: readParts(message["content"]).text,
        toolResultIds: id === undefined ? [] : [id],
        toolName: readString(message, "name"),
        isError: message["isError"] === true,
      });
    }
    case "function":
      return buildFacts({
        ...common,
        kind: "toolResult",
        text: readParts(message["content"]).text,
        toolName: readString(message, "name"),
      });
    default:
      return buildFacts({ ...common, kind: "other" });
  }
}

/**
 * The adapter for OpenAI Chat Completions messages. Tool-call arguments are parsed from their
 * JSON string (kept as the raw string when unparsable). The deprecated `function_call` has no
 * id, so it is not reported as a tool call; its `function` result is a tool result with no ids.
 */
export function createOpenAIAdapter(
  options: AdapterOptions<OpenAIChatMessage> = {},
): MessageAdapter<OpenAIChatMessage> {
  const isPinned = options.isPinned;
  return {
    name: ADAPTER_NAME,
    readFacts(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      return readOpenAIFacts(fields, isPinned ? isPinned(message) : fields["pinned"] === true);
    },
    createSummary(text, summaryOptions = {}) {
      const summary: OpenAIUserMessage = {
        role: "user",
        name: OPENAI_SUMMARY_NAME,
        content: wrapSummary(text),
      };
      if (summaryOptions.timestamp !== undefined) summary.timestamp = summaryOptions.timestamp;
      return summary;
    },
    createNote(text, noteOptions = {}) {
      const note: OpenAIUserMessage = { role: "user", name: OPENAI_NOTE_NAME, content: text };
      if (noteOptions.timestamp !== undefined) note.timestamp = noteOptions.timestamp;
      return note;
    },
    replaceToolOutput(message, replacement) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (fields["role"] !== "tool" && fields["role"] !== "function") {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The openai message adapter can only replace the output of a "tool" or "function" message, but found role ${describeValue(fields["role"])}.`,
          { hint: 'Call replaceToolOutput only on messages whose facts have kind "toolResult".' },
        );
      }
      return { ...(message as OpenAIToolMessage | OpenAIFunctionMessage), content: replacement };
    },
    mapText(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const copy = { ...fields };
      if (fields["content"] !== undefined && fields["content"] !== null) {
        copy["content"] = mapTextContent(fields["content"], rewrite, "text", "refusal");
      }
      const refusal = readString(fields, "refusal");
      if (refusal !== undefined) copy["refusal"] = rewrite(refusal);
      return copy as unknown as OpenAIChatMessage;
    },
    dropThinking(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (typeof fields["reasoning_content"] !== "string" || fields["reasoning_content"] === "") return message;
      const { reasoning_content: _dropped, ...rest } = fields;
      return rest as unknown as OpenAIChatMessage;
    },
    mapToolArguments(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      const copy = { ...fields };
      if (Array.isArray(fields["tool_calls"])) {
        copy["tool_calls"] = (fields["tool_calls"] as unknown[]).map((call) => {
          if (!isFields(call)) return call;
          const fn = call["function"];
          const custom = call["custom"];
          if (isFields(fn) && fn["arguments"] !== undefined) return { ...call, function: { ...fn, arguments: mapArgumentStrings(fn["arguments"], rewrite) } };
          if (isFields(custom) && custom["input"] !== undefined) return { ...call, custom: { ...custom, input: mapArgumentStrings(custom["input"], rewrite) } };
          return call;
        });
      }
      const legacy = fields["function_call"];
      if (isFields(legacy) && legacy["arguments"] !== undefined) copy["function_call"] = { ...legacy, arguments: mapArgumentStrings(legacy["arguments"], rewrite) };
      return copy as unknown as OpenAIChatMessage;
    },
  };
}
