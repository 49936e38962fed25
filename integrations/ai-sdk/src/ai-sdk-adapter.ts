/**
 * Adapter for the AI SDK's `ModelMessage` (package `ai`, majors 6 and 7): what `generateText`,
 * `streamText`, a `ToolLoopAgent` and `convertToModelMessages` work with.
 *
 * Summaries and notes are `user` messages with one text part, marked in `providerOptions` under
 * the key `compaction`: `providerOptions` is part of `ModelMessage`, and each provider reads only
 * its own key, so the message goes to any provider unchanged. A summary whose marker was lost
 * (a host that stores messages without `providerOptions`) is still recognised by its words.
 */
import {
  type AdapterOptions,
  CompactionError,
  mapArgumentStrings,
  describeValue,
  ErrorCodes,
  type MessageAdapter,
  type MessageFacts,
  type MessageKind,
  type ToolCallInfo,
  unwrapSummary,
  withoutBlocks,
  wrapSummary,
} from "@compaction/core";
import type { ModelMessage, ToolModelMessage, UserModelMessage } from "ai";

/** The `providerOptions` key that marks the summaries and notes this adapter creates. */
export const COMPACTION_PROVIDER_KEY = "compaction";

const ADAPTER_NAME = "ai-sdk";

export interface AiSdkAdapterOptions extends AdapterOptions<ModelMessage> {
  /**
   * The provider's figure for the whole context as of an assistant message (its step's input
   * tokens plus output tokens), when the host knows it: `ModelMessage` has no usage field, the
   * step results do. `compactionPrepareStep` fills it from `steps[].usage`.
   */
  readonly usageOf?: (message: ModelMessage) => number | undefined;
}

type Fields = Readonly<Record<string, unknown>>;

function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readString(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === "string" ? value : undefined;
}

function joinText(parts: readonly string[]): string {
  return parts.filter((part) => part.length > 0).join("\n");
}

/** What the parts of one message hold, read in one pass. */
interface PartsReading {
  texts: string[];
  thoughts: string[];
  toolCalls: ToolCallInfo[];
  toolResultIds: string[];
  toolName: string | undefined;
  isError: boolean;
  imageCount: number;
  approvalResponses: number;
}

function emptyReading(): PartsReading {
  return { texts: [], thoughts: [], toolCalls: [], toolResultIds: [], toolName: undefined, isError: false, imageCount: 0, approvalResponses: 0 };
}

function isImageMedia(mediaType: unknown): boolean {
  return typeof mediaType === "string" && mediaType.startsWith("image/");
}

/** A file the model sees but we cannot read: named, so summaries can say it was there. */
function fileLabel(part: Fields): string {
  const name = readString(part, "filename");
  const mediaType = readString(part, "mediaType") ?? "file";
  return `[file${name === undefined ? "" : ` ${name}`} (${mediaType})]`;
}

/** Text of a tool result's `output` (every `ToolResultOutput` type of ai 6 and 7). */
function readToolOutput(output: unknown, reading: PartsReading): void {
  if (!isFields(output)) return;
  const value = output["value"];
  switch (output["type"]) {
    case "text":
    case "error-text":
      reading.texts.push(typeof value === "string" ? value : "");
      break;
    case "json":
    case "error-json":
      reading.texts.push(JSON.stringify(value) ?? "");
      break;
    case "execution-denied": {
      const reason = readString(output, "reason");
      reading.texts.push(reason === undefined ? "Execution denied." : `Execution denied: ${reason}`);
      break;
    }
    case "content":
      if (!Array.isArray(value)) break;
      for (const item of value as unknown[]) {
        if (!isFields(item)) continue;
        const type = readString(item, "type") ?? "";
        if (type === "text") reading.texts.push(readString(item, "text") ?? "");
        else if (type.startsWith("image-") || isImageMedia(item["mediaType"])) reading.imageCount += 1;
        else if (type !== "custom") reading.texts.push(fileLabel(item));
      }
      break;
  }
  if (output["type"] === "error-text" || output["type"] === "error-json") reading.isError = true;
}

function readParts(content: unknown): PartsReading {
  const reading = emptyReading();
  if (typeof content === "string") {
    reading.texts.push(content);
    return reading;
  }
  if (!Array.isArray(content)) return reading;
  const issued = new Set<string>();
  for (const part of content as unknown[]) {
    if (!isFields(part)) continue;
    switch (part["type"]) {
      case "text":
        reading.texts.push(readString(part, "text") ?? "");
        break;
      case "reasoning":
        reading.thoughts.push(readString(part, "text") ?? "");
        break;
      case "image":
        reading.imageCount += 1;
        break;
      case "file":
      case "reasoning-file":
        if (isImageMedia(part["mediaType"])) reading.imageCount += 1;
        else reading.texts.push(fileLabel(part));
        break;
      case "tool-call": {
        const id = readString(part, "toolCallId");
        if (id === undefined) break;
        issued.add(id);
        reading.toolCalls.push({ id, name: readString(part, "toolName") ?? "", arguments: part["input"] });
        break;
      }
      case "tool-result": {
        const id = readString(part, "toolCallId");
        // A provider-executed tool's result sits in the assistant message beside its call: that pair
        // is one message, so only results answering a call of another message are tool results.
        if (id !== undefined && !issued.has(id)) reading.toolResultIds.push(id);
        reading.toolName ??= readString(part, "toolName");
        readToolOutput(part["output"], reading);
        break;
      }
      case "tool-approval-response": {
        reading.approvalResponses += 1;
        const reason = readString(part, "reason");
        reading.texts.push(`${part["approved"] === true ? "Approved" : "Denied"}${reason === undefined ? "" : `: ${reason}`}`);
        break;
      }
    }
  }
  return reading;
}

/** The facts of a message every field of which was read as untrusted data. */
function facts(kind: MessageKind, reading: PartsReading, pinned: boolean, usageContextTokens?: number): MessageFacts {
  const result: { -readonly [K in keyof MessageFacts]: MessageFacts[K] } = {
    kind,
    text: joinText(reading.texts),
    thinking: joinText(reading.thoughts),
    toolCalls: Object.freeze(reading.toolCalls),
    toolResultIds: Object.freeze(reading.toolResultIds),
    isError: reading.isError,
    imageCount: reading.imageCount,
    pinned,
  };
  if (reading.toolName !== undefined) result.toolName = reading.toolName;
  if (usageContextTokens !== undefined && Number.isFinite(usageContextTokens) && usageContextTokens > 0) {
    result.usageContextTokens = usageContextTokens;
  }
  return Object.freeze(result);
}

/** `summary`, `note`, or undefined: the marker this adapter puts on what it creates. */
function compactionMarker(message: Fields): unknown {
  const providerOptions = message["providerOptions"];
  if (!isFields(providerOptions)) return undefined;
  const ours = providerOptions[COMPACTION_PROVIDER_KEY];
  return isFields(ours) ? ours["kind"] : undefined;
}

function readAiSdkFacts(message: Fields, pinned: boolean, usageOf: () => number | undefined): MessageFacts {
  const reading = readParts(message["content"]);
  switch (message["role"]) {
    case "system":
      return facts("system", reading, pinned);
    case "user": {
      const marker = compactionMarker(message);
      const text = joinText(reading.texts);
      if (marker === "summary" || (marker === undefined && unwrapSummary(text) !== text)) {
        return facts("summary", { ...reading, texts: [unwrapSummary(text)] }, pinned);
      }
      return facts(marker === "note" ? "other" : "user", reading, pinned);
    }
    case "assistant":
      return facts("assistant", reading, pinned, usageOf());
    case "tool":
      // A tool message holding only approval responses answers the assistant message just before
      // it (the one that asked for approval): with no ids, the core pairs it with that message.
      return facts("toolResult", reading, pinned);
    default:
      return facts("other", emptyReading(), pinned);
  }
}

/** A tool result's output with its text rewritten; JSON becomes text only when the rewrite changed it. */
function mapToolOutput(output: unknown, rewrite: (text: string) => string): unknown {
  if (!isFields(output)) return output;
  const value = output["value"];
  switch (output["type"]) {
    case "text":
    case "error-text":
      return typeof value === "string" ? { ...output, value: rewrite(value) } : output;
    case "json":
    case "error-json": {
      const text = JSON.stringify(value) ?? "";
      const rewritten = rewrite(text);
      if (rewritten === text) return output;
      const { providerOptions } = output;
      return { type: output["type"] === "json" ? "text" : "error-text", value: rewritten, ...(providerOptions !== undefined ? { providerOptions } : {}) };
    }
    case "content":
      return Array.isArray(value) ? { ...output, value: mapTextParts(value, rewrite) } : output;
    default:
      return output;
  }
}

/** Parts with each `text` part's text rewritten, and each tool result's output (the pieces of the message's text). */
function mapTextParts(parts: readonly unknown[], rewrite: (text: string) => string): unknown[] {
  return parts.map((part) => {
    if (!isFields(part)) return part;
    if (part["type"] === "text" && typeof part["text"] === "string") return { ...part, text: rewrite(part["text"]) };
    if (part["type"] === "tool-result") return { ...part, output: mapToolOutput(part["output"], rewrite) };
    return part;
  });
}

function requireMessage(message: unknown): Fields {
  if (isFields(message)) return message;
  throw new CompactionError(
    ErrorCodes.MESSAGE_UNREADABLE,
    `The ${ADAPTER_NAME} message adapter expected a ModelMessage object but found ${describeValue(message)}.`,
    { hint: "Pass the AI SDK's ModelMessage objects unchanged (e.g. from convertToModelMessages, or prepareStep's messages)." },
  );
}

/**
 * The adapter for the AI SDK's `ModelMessage`: system, user, assistant and tool messages; text,
 * reasoning, file and image parts; `tool-call` and `tool-result` parts paired by `toolCallId`
 * (a provider-executed tool's result beside its call in the assistant message is one unit); tool
 * approval requests ride with their call and approval responses answer the message that asked.
 */
export function createAiSdkAdapter(options: AiSdkAdapterOptions = {}): MessageAdapter<ModelMessage> {
  const { isPinned, usageOf } = options;
  return {
    name: ADAPTER_NAME,
    readFacts(message) {
      const fields = requireMessage(message);
      const pinned = isPinned ? isPinned(message) : fields["pinned"] === true;
      return readAiSdkFacts(fields, pinned, () => usageOf?.(message));
    },
    createSummary(text) {
      const summary: UserModelMessage = {
        role: "user",
        content: [{ type: "text", text: wrapSummary(text) }],
        providerOptions: { [COMPACTION_PROVIDER_KEY]: { kind: "summary" } },
      };
      return summary;
    },
    createNote(text) {
      const note: UserModelMessage = {
        role: "user",
        content: [{ type: "text", text }],
        providerOptions: { [COMPACTION_PROVIDER_KEY]: { kind: "note" } },
      };
      return note;
    },
    replaceToolOutput(message, replacement) {
      const fields = requireMessage(message);
      if (fields["role"] !== "tool" || !Array.isArray(fields["content"])) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The ${ADAPTER_NAME} message adapter can only replace the output of a "tool" message, but found role ${describeValue(fields["role"])}.`,
          { hint: 'Call replaceToolOutput only on messages whose facts have kind "toolResult".' },
        );
      }
      // Each result keeps its id, tool name and error flag; approval responses are kept as they are.
      const content = (message as ToolModelMessage).content.map((part) => {
        if (part.type !== "tool-result") return part;
        const failed = part.output.type === "error-text" || part.output.type === "error-json";
        return { ...part, output: { type: failed ? "error-text" : "text", value: replacement } as const };
      });
      return { ...(message as ToolModelMessage), content } as ToolModelMessage;
    },
    mapText(message, rewrite) {
      const fields = requireMessage(message);
      const content = fields["content"];
      if (readAiSdkFacts(fields, false, () => undefined).kind === "summary") {
        // The summary's own text is the piece, not the words around it, so it still reads as one.
        const inner = (text: string) => (unwrapSummary(text) !== text ? wrapSummary(rewrite(unwrapSummary(text))) : rewrite(text));
        return { ...fields, content: typeof content === "string" ? inner(content) : Array.isArray(content) ? mapTextParts(content, inner) : content } as ModelMessage;
      }
      if (typeof content === "string") return { ...fields, content: rewrite(content) } as ModelMessage;
      if (!Array.isArray(content)) return message;
      return { ...fields, content: mapTextParts(content, rewrite) } as ModelMessage;
    },
    dropThinking(message) {
      const fields = requireMessage(message);
      if (fields["role"] !== "assistant") return message;
      const content = withoutBlocks(fields["content"], "reasoning");
      return content === fields["content"] ? message : ({ ...fields, content } as ModelMessage);
    },
    // A file written by a tool call is the call's `input`: its strings may be cut to head and tail.
    mapToolArguments(message, rewrite) {
      const fields = requireMessage(message);
      if (fields["role"] !== "assistant" || !Array.isArray(fields["content"])) return message;
      const content = (fields["content"] as unknown[]).map((part) =>
        isFields(part) && part["type"] === "tool-call" && part["input"] !== undefined ? { ...part, input: mapArgumentStrings(part["input"], rewrite) } : part,
      );
      return { ...fields, content } as ModelMessage;
    },
    // The AI SDK's Anthropic provider reads a message-level cache breakpoint from
    // providerOptions.anthropic.cacheControl; other providers ignore the anthropic key.
    markCacheBreakpoint(message) {
      const fields = requireMessage(message);
      const providerOptions = isFields(fields["providerOptions"]) ? fields["providerOptions"] : {};
      const anthropic = isFields(providerOptions["anthropic"]) ? providerOptions["anthropic"] : {};
      return { ...fields, providerOptions: { ...providerOptions, anthropic: { ...anthropic, cacheControl: { type: "ephemeral" } } } } as unknown as ModelMessage;
    },
  };
}
