/**
 * Adapter for OpenAI Responses API items: the `input` of `POST /v1/responses` and the `output`
 * items it returns, as an agent keeps them (the OpenAI Agents SDK's `AgentInputItem`s, a Codex
 * rollout's response items). One item is one message for the core.
 *
 * - `message` (or an easy input message `{ role, content }`): `user`, `assistant`,
 *   `system` / `developer` by role; content a string or `input_text` / `output_text` /
 *   `refusal` / `input_image` / `input_file` parts.
 * - `function_call` and `custom_tool_call` are assistant items issuing a call by `call_id`;
 *   `function_call_output` and `custom_tool_call_output` answer it. Every other `*_call` item
 *   with a `call_id` (`computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`) and
 *   its `*_call_output` pair the same way.
 * - The OpenAI Agents SDK's own item protocol (`AgentInputItem`) reads the same: `callId` for
 *   `call_id`, `function_call_result` / `computer_call_result` for the outputs, output
 *   `{ type: "text", text }`, reasoning `content` / `rawContent`.
 * - `reasoning`: an assistant item whose summary (and content, when present) is thinking.
 * - `compaction`: OpenAI's own compacted history (encrypted): a summary with no readable text.
 * - Anything else (`web_search_call`, `mcp_call`, `item_reference`, ...) is kind `other`, with the
 *   readable output it carries.
 *
 * Summaries and notes are user messages. The API rejects fields it does not know on input items,
 * so they carry no marker: a summary is recognised by the words `wrapSummary` puts around it, a
 * note by `[compaction note]` at its start.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import type { AdapterOptions, MessageAdapter, MessageFacts, ToolCallInfo } from "./adapter.js";
import {
  type Fields,
  buildFacts,
  describeValue,
  joinText,
  mapArgumentStrings,
  readString,
  requireMessageObject,
  unwrapSummary,
  wrapSummary,
} from "./message-fields.js";
import {
  mapResponsesContent,
  parseShellOutput,
  readResponsesContent,
  readResponsesOutput,
  responsesReasoningTexts,
  withoutReasoningTexts,
} from "./responses-items.js";

export interface ResponsesInputText {
  type: "input_text" | "output_text";
  text: string;
  [key: string]: unknown;
}

/** A message item: what the user, developer or model said. */
export interface ResponsesMessageItem {
  type?: "message";
  role: "user" | "assistant" | "system" | "developer";
  content: string | Array<ResponsesInputText | { type: string; [key: string]: unknown }>;
  id?: string;
  status?: string;
  [key: string]: unknown;
}

export interface ResponsesFunctionCallItem {
  type: "function_call";
  call_id: string;
  name: string;
  /** A JSON string, as the API sends it. */
  arguments: string;
  id?: string;
  status?: string;
  [key: string]: unknown;
}

export interface ResponsesFunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string | Array<{ type: string; [key: string]: unknown }>;
  id?: string;
  [key: string]: unknown;
}

export interface ResponsesCustomToolCallItem {
  type: "custom_tool_call";
  call_id: string;
  name: string;
  input: string;
  id?: string;
  [key: string]: unknown;
}

export interface ResponsesCustomToolCallOutputItem {
  type: "custom_tool_call_output";
  call_id: string;
  output: string | Array<{ type: string; [key: string]: unknown }>;
  id?: string;
  [key: string]: unknown;
}

export interface ResponsesReasoningItem {
  type: "reasoning";
  id?: string;
  summary: Array<{ type: "summary_text"; text: string }>;
  content?: Array<{ type: "reasoning_text"; text: string }>;
  encrypted_content?: string | null;
  [key: string]: unknown;
}

/** Any other item (`web_search_call`, `computer_call`, `mcp_call`, `compaction`, ...). */
export interface ResponsesOtherItem {
  type: string;
  [key: string]: unknown;
}

export type ResponsesItem =
  | ResponsesMessageItem
  | ResponsesFunctionCallItem
  | ResponsesFunctionCallOutputItem
  | ResponsesCustomToolCallItem
  | ResponsesCustomToolCallOutputItem
  | ResponsesReasoningItem
  | ResponsesOtherItem;

/** The start of the text of a note this adapter writes. */
export const RESPONSES_NOTE_PREFIX = "[compaction note] ";

const ADAPTER_NAME = "responses";

/** Parses a JSON arguments string; keeps the raw string when it is not valid JSON. */
function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function isMessageItem(item: Fields): boolean {
  const type = item["type"];
  return (type === "message" || type === undefined) && typeof item["role"] === "string";
}

/** The call id: `call_id` in the API's items, `callId` in the Agents SDK's. */
function callIdOf(item: Fields): string | undefined {
  return readString(item, "call_id") ?? readString(item, "callId");
}

/** `*_call` items that pair with their output by call id (function and custom tools included). */
function isCallItem(type: string, item: Fields): boolean {
  return type.endsWith("_call") && callIdOf(item) !== undefined;
}

/** `*_call_output` (the API) and `*_call_result` (the Agents SDK: `function_call_result`, `computer_call_result`). */
function isCallOutputItem(type: string, item: Fields): boolean {
  return (type.endsWith("_call_output") || type.endsWith("_call_result")) && callIdOf(item) !== undefined;
}

/** The tool an output answers, from its type (`computer_call_output` -> `computer`) or its `name`. */
function outputToolName(type: string, item: Fields): string | undefined {
  const named = readString(item, "name");
  if (named !== undefined) return named;
  if (type === "function_call_output" || type === "custom_tool_call_output") return undefined;
  return type.replace(/_call_(output|result)$/, "");
}

/**
 * The property that holds a call item's arguments: `arguments` (a JSON string) of a function call,
 * `input` of a custom tool call, and for the other calls the first of `arguments`, `action`
 * (computer, shell) and `input` they have. Undefined when the item has none.
 */
function argumentsKey(type: string, item: Fields): string | undefined {
  if (type === "function_call") return "arguments";
  if (type === "custom_tool_call") return "input";
  return ["arguments", "action", "input"].find((key) => item[key] !== undefined && item[key] !== null);
}

/** A call's name and arguments (a function call's parsed from their JSON string). */
function callInfo(type: string, item: Fields): ToolCallInfo {
  const id = callIdOf(item) as string;
  const name = readString(item, "name") ?? type.slice(0, -"_call".length);
  const key = argumentsKey(type, item);
  const raw = key === undefined ? undefined : item[key];
  return { id, name, arguments: type === "function_call" ? parseArguments(raw) : raw };
}

function readMessageFacts(item: Fields, common: { id: string | undefined; pinned: boolean }): MessageFacts {
  const { texts, imageCount } = readResponsesContent(item["content"]);
  const text = joinText(texts);
  switch (item["role"]) {
    case "system":
    case "developer":
      return buildFacts({ ...common, kind: "system", text });
    case "assistant":
      return buildFacts({ ...common, kind: "assistant", text, imageCount });
    case "user": {
      const summary = unwrapSummary(text);
      if (summary !== text) return buildFacts({ ...common, kind: "summary", text: summary });
      if (text.startsWith(RESPONSES_NOTE_PREFIX)) return buildFacts({ ...common, kind: "other", text: text.slice(RESPONSES_NOTE_PREFIX.length) });
      return buildFacts({ ...common, kind: "user", text, imageCount });
    }
    default:
      return buildFacts({ ...common, kind: "other", text });
  }
}

function readResponsesFacts(item: Fields, pinned: boolean): MessageFacts {
  const common = { id: readString(item, "id"), pinned };
  if (isMessageItem(item)) return readMessageFacts(item, common);
  const type = readString(item, "type") ?? "";
  if (type === "reasoning") return buildFacts({ ...common, kind: "assistant", thinking: joinText(responsesReasoningTexts(item)) });
  if (type === "compaction" || type === "compaction_summary") return buildFacts({ ...common, kind: "summary" });
  if (isCallItem(type, item)) return buildFacts({ ...common, kind: "assistant", toolCalls: [callInfo(type, item)] });
  if (isCallOutputItem(type, item)) {
    const output = readResponsesOutput(item["output"]);
    // A shell output's JSON wrapper is not text the model reads: its `output` is.
    const shell = typeof item["output"] === "string" ? parseShellOutput(item["output"]) : undefined;
    return buildFacts({
      ...common,
      kind: "toolResult",
      text: shell === undefined ? output.text : shell.output,
      imageCount: output.imageCount,
      isError: output.isError || item["status"] === "failed",
      toolResultIds: [callIdOf(item) as string],
      toolName: outputToolName(type, item),
    });
  }
  // Self-contained items (an MCP call with its output, a hosted tool's call): what they returned.
  const output = item["output"];
  return buildFacts({ ...common, kind: "other", text: typeof output === "string" ? output : "" });
}

/**
 * The adapter for OpenAI Responses items (see the module comment). Function-call arguments are
 * parsed from their JSON string (kept as the raw string when unparsable).
 */
export function createResponsesAdapter(options: AdapterOptions<ResponsesItem> = {}): MessageAdapter<ResponsesItem> {
  const isPinned = options.isPinned;
  return {
    name: ADAPTER_NAME,
    readFacts(item) {
      const fields = requireMessageObject(ADAPTER_NAME, item);
      return readResponsesFacts(fields, isPinned ? isPinned(item) : fields["pinned"] === true);
    },
    createSummary(text) {
      return { type: "message", role: "user", content: [{ type: "input_text", text: wrapSummary(text) }] };
    },
    createNote(text) {
      return { type: "message", role: "user", content: [{ type: "input_text", text: RESPONSES_NOTE_PREFIX + text }] };
    },
    replaceToolOutput(item, replacement) {
      const fields = requireMessageObject(ADAPTER_NAME, item);
      const type = readString(fields, "type") ?? "";
      if (!isCallOutputItem(type, fields)) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The responses message adapter can only replace the output of a "*_call_output" item (e.g. function_call_output), but found type ${describeValue(fields["type"])}.`,
          { hint: 'Call replaceToolOutput only on items whose facts have kind "toolResult".' },
        );
      }
      return { ...fields, output: replacement } as ResponsesItem;
    },
    mapText(item, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, item);
      if (isMessageItem(fields)) {
        if (fields["role"] === "user") {
          // A summary's or note's piece is the text inside its wrapper, as readFacts reads it.
          const { texts } = readResponsesContent(fields["content"]);
          const whole = joinText(texts);
          const summary = unwrapSummary(whole);
          if (summary !== whole) return this.createSummary(rewrite(summary));
          if (whole.startsWith(RESPONSES_NOTE_PREFIX)) return this.createNote(rewrite(whole.slice(RESPONSES_NOTE_PREFIX.length)));
        }
        return { ...fields, content: mapResponsesContent(fields["content"], rewrite) } as ResponsesItem;
      }
      const type = readString(fields, "type") ?? "";
      if (isCallOutputItem(type, fields)) {
        const output = fields["output"];
        const shell = typeof output === "string" ? parseShellOutput(output) : undefined;
        if (shell !== undefined) return { ...fields, output: JSON.stringify({ ...shell.fields, output: rewrite(shell.output) }) } as ResponsesItem;
        if (typeof output === "string" || Array.isArray(output)) return { ...fields, output: mapResponsesContent(output, rewrite) } as ResponsesItem;
        if (output !== null && typeof output === "object" && (output as Fields)["type"] === "text" && typeof (output as Fields)["text"] === "string") {
          return { ...fields, output: { ...(output as Fields), text: rewrite((output as Fields)["text"] as string) } } as unknown as ResponsesItem;
        }
        if (output !== null && typeof output === "object" && typeof (output as Fields)["content"] === "string") {
          return { ...fields, output: { ...(output as Fields), content: rewrite((output as Fields)["content"] as string) } } as unknown as ResponsesItem;
        }
        return item;
      }
      if (!isCallItem(type, fields) && type !== "reasoning" && typeof fields["output"] === "string") {
        return { ...fields, output: rewrite(fields["output"]) } as ResponsesItem;
      }
      return item;
    },
    // A reasoning item is one item of its own, all of it thinking: dropping its thinking empties
    // the summary and content it is read from and keeps the item (its id and encrypted content,
    // which is what the API restores the model's reasoning from; an item whose summary is empty
    // is what the API itself returns when no summary was asked for), so the function call after
    // it still has its reasoning item. Other items have no thinking.
    dropThinking(item) {
      const fields = requireMessageObject(ADAPTER_NAME, item);
      return fields["type"] === "reasoning" ? (withoutReasoningTexts(fields) as ResponsesItem) : item;
    },
    // The arguments the facts read: a function call's JSON string stays a JSON string, a custom
    // tool's freeform input (a patch) is rewritten whole.
    mapToolArguments(item, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, item);
      const type = readString(fields, "type") ?? "";
      if (isMessageItem(fields) || !isCallItem(type, fields)) return item;
      const key = argumentsKey(type, fields);
      if (key === undefined || fields[key] === undefined) return item;
      return { ...fields, [key]: mapArgumentStrings(fields[key], rewrite) } as ResponsesItem;
    },
  };
}
