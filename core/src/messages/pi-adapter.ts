/**
 * Adapter for pi-coding-agent's `AgentMessage` (what pi and OpenClaw store in session files).
 * The types below are structural copies of the shapes pi writes; the core does not depend on pi.
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
} from "./message-fields.js";

export interface PiTextContent {
  type: "text";
  text: string;
}

export interface PiImageContent {
  type: "image";
  /** Base64 image data. */
  data: string;
  mimeType: string;
}

export interface PiThinkingContent {
  type: "thinking";
  thinking: string;
  redacted?: boolean;
}

export interface PiToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** Provider usage as pi records it on assistant messages. */
export interface PiUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens?: number;
}

/** Fields any pi message may carry for this project: a pin flag (pi itself ignores it). */
interface PiMessageBase {
  /** Milliseconds since the epoch. */
  timestamp: number;
  /** Pinned messages are never dropped, pruned or summarised. */
  pinned?: boolean;
}

export interface PiUserMessage extends PiMessageBase {
  role: "user";
  content: string | (PiTextContent | PiImageContent)[];
}

export interface PiAssistantMessage extends PiMessageBase {
  role: "assistant";
  content: (PiTextContent | PiThinkingContent | PiToolCall)[];
  usage?: PiUsage;
  /** `aborted` and `error` mean the usage figures are not valid. */
  stopReason?: "stop" | "length" | "toolUse" | "error" | "aborted";
  api?: string;
  provider?: string;
  model?: string;
  errorMessage?: string;
}

export interface PiToolResultMessage extends PiMessageBase {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (PiTextContent | PiImageContent)[];
  isError: boolean;
  details?: unknown;
}

/** A shell command the user ran with `!` (`!!` sets `excludeFromContext`). */
export interface PiBashExecutionMessage extends PiMessageBase {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode?: number | null;
  cancelled: boolean;
  truncated?: boolean;
  fullOutputPath?: string;
  excludeFromContext?: boolean;
}

/** An extension-injected message; pi sends it to the model as user content. */
export interface PiCustomMessage extends PiMessageBase {
  role: "custom";
  customType: string;
  content: string | (PiTextContent | PiImageContent)[];
  display: boolean;
  details?: unknown;
}

export interface PiBranchSummaryMessage extends PiMessageBase {
  role: "branchSummary";
  summary: string;
  fromId: string;
}

export interface PiCompactionSummaryMessage extends PiMessageBase {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
}

/** pi-coding-agent's `AgentMessage`, structurally. */
export type PiMessage =
  | PiUserMessage
  | PiAssistantMessage
  | PiToolResultMessage
  | PiBashExecutionMessage
  | PiCustomMessage
  | PiBranchSummaryMessage
  | PiCompactionSummaryMessage;

/** `customType` of the notes this adapter creates (e.g. rolling's eviction note). */
export const PI_NOTE_CUSTOM_TYPE = "compaction-note";

const ADAPTER_NAME = "pi";

/** Default pin rule: `pinned: true` on the message or on its `details`. */
function isPinnedByDefault(message: Fields): boolean {
  if (message["pinned"] === true) return true;
  const details = message["details"];
  return isFields(details) && details["pinned"] === true;
}

interface BlockReading {
  text: string;
  thinking: string;
  toolCalls: ToolCallInfo[];
  imageCount: number;
}

/** Reads text, thinking, tool calls and images from string-or-blocks content. */
function readContent(content: unknown): BlockReading {
  const reading: BlockReading = { text: "", thinking: "", toolCalls: [], imageCount: 0 };
  if (typeof content === "string") {
    reading.text = content;
    return reading;
  }
  if (!Array.isArray(content)) return reading;
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (const block of content as unknown[]) {
    if (!isFields(block)) continue;
    switch (block["type"]) {
      case "text":
        texts.push(readString(block, "text") ?? "");
        break;
      case "thinking":
        thoughts.push(readString(block, "thinking") ?? "");
        break;
      case "image":
        reading.imageCount += 1;
        break;
      case "toolCall": {
        const id = readString(block, "id");
        if (id !== undefined) {
          reading.toolCalls.push({ id, name: readString(block, "name") ?? "", arguments: block["arguments"] });
        }
        break;
      }
    }
  }
  reading.text = joinText(texts);
  reading.thinking = joinText(thoughts);
  return reading;
}

/** The provider's context figure, as pi computes it; only for completed responses. */
function readUsageContextTokens(message: Fields): number | undefined {
  const stopReason = message["stopReason"];
  if (stopReason === "aborted" || stopReason === "error") return undefined;
  const usage = message["usage"];
  if (!isFields(usage)) return undefined;
  const total = readCount(usage, "totalTokens");
  if (total > 0) return total;
  return positiveTotal(
    readCount(usage, "input") + readCount(usage, "output") + readCount(usage, "cacheRead") + readCount(usage, "cacheWrite"),
  );
}

/** The text pi sends to the model for a `!` command. */
/** `provider/model` of a response, or the model alone when pi did not record the provider. */
function readModel(message: Fields): string | undefined {
  const model = readString(message, "model");
  if (model === undefined || model === "") return undefined;
  const provider = readString(message, "provider");
  return provider === undefined || provider === "" ? model : `${provider}/${model}`;
}

function bashText(message: Fields): string {
  const command = readString(message, "command") ?? "";
  const output = readString(message, "output") ?? "";
  let text = `Ran \`${command}\`\n`;
  text += output.length > 0 ? `\`\`\`\n${output}\n\`\`\`` : "(no output)";
  const exitCode = message["exitCode"];
  if (message["cancelled"] === true) text += "\n\n(command cancelled)";
  else if (typeof exitCode === "number" && exitCode !== 0) text += `\n\nCommand exited with code ${exitCode}`;
  return text;
}

function readPiFacts(message: Fields, pinned: boolean): MessageFacts {
  const common = { timestamp: readTimestamp(message), id: readString(message, "id"), pinned };
  switch (message["role"]) {
    case "user": {
      const { text, imageCount } = readContent(message["content"]);
      return buildFacts({ ...common, kind: "user", text, imageCount });
    }
    case "assistant": {
      const { text, thinking, toolCalls, imageCount } = readContent(message["content"]);
      return buildFacts({
        ...common,
        kind: "assistant",
        text,
        thinking,
        toolCalls,
        imageCount,
        usageContextTokens: readUsageContextTokens(message),
        model: readModel(message),
      });
    }
    case "toolResult": {
      const { text, imageCount } = readContent(message["content"]);
      const toolCallId = readString(message, "toolCallId");
      return buildFacts({
        ...common,
        kind: "toolResult",
        text,
        imageCount,
        toolResultIds: toolCallId === undefined ? [] : [toolCallId],
        toolName: readString(message, "toolName"),
        isError: message["isError"] === true,
      });
    }
    case "bashExecution":
      // User-initiated context; pi starts a turn with it. `!!` commands never reach the model,
      // so they cost no tokens and have no text to summarise.
      if (message["excludeFromContext"] === true) return buildFacts({ ...common, kind: "other", text: "" });
      return buildFacts({ ...common, kind: "user", text: bashText(message) });
    case "custom": {
      const { text, imageCount } = readContent(message["content"]);
      return buildFacts({ ...common, kind: "other", text, imageCount });
    }
    case "branchSummary":
    case "compactionSummary":
      return buildFacts({ ...common, kind: "summary", text: readString(message, "summary") ?? "" });
    default:
      return buildFacts({ ...common, kind: "other" });
  }
}

/**
 * The adapter for pi-coding-agent messages (the default format).
 * Summaries are `compactionSummary` messages; notes are `custom` messages of type
 * `compaction-note`, which pi sends to the model as user content.
 */
export function createPiAdapter(options: AdapterOptions<PiMessage> = {}): MessageAdapter<PiMessage> {
  const isPinned = options.isPinned;
  return {
    name: ADAPTER_NAME,
    readFacts(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      return readPiFacts(fields, isPinned ? isPinned(message) : isPinnedByDefault(fields));
    },
    createSummary(text, summaryOptions = {}) {
      return {
        role: "compactionSummary",
        summary: text,
        tokensBefore: summaryOptions.tokensBefore ?? 0,
        timestamp: summaryOptions.timestamp ?? Date.now(),
      };
    },
    createNote(text, noteOptions = {}) {
      return {
        role: "custom",
        customType: PI_NOTE_CUSTOM_TYPE,
        content: text,
        display: true,
        timestamp: noteOptions.timestamp ?? Date.now(),
      };
    },
    replaceToolOutput(message, replacement) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (fields["role"] !== "toolResult") {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The pi message adapter can only replace the output of a "toolResult" message, but found role ${describeValue(fields["role"])}.`,
          { hint: "Call replaceToolOutput only on messages whose facts have kind \"toolResult\"." },
        );
      }
      return { ...(message as PiToolResultMessage), content: [{ type: "text", text: replacement }] };
    },
    mapText(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      switch (fields["role"]) {
        case "user":
        case "assistant":
        case "toolResult":
        case "custom":
          return { ...message, content: mapTextContent(fields["content"], rewrite, "text") } as PiMessage;
        case "bashExecution": {
          const output = readString(fields, "output");
          return output === undefined ? message : { ...(message as PiBashExecutionMessage), output: rewrite(output) };
        }
        case "branchSummary":
        case "compactionSummary": {
          const summary = readString(fields, "summary");
          return summary === undefined ? message : ({ ...message, summary: rewrite(summary) } as PiMessage);
        }
        default:
          return message;
      }
    },
    dropThinking(message) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (fields["role"] !== "assistant") return message;
      const content = withoutBlocks(fields["content"], "thinking");
      return content === fields["content"] ? message : ({ ...message, content } as PiMessage);
    },
    mapToolArguments(message, rewrite) {
      const fields = requireMessageObject(ADAPTER_NAME, message);
      if (fields["role"] !== "assistant" || !Array.isArray(fields["content"])) return message;
      const content = (fields["content"] as unknown[]).map((block) =>
        isFields(block) && block["type"] === "toolCall" && block["arguments"] !== undefined
          ? { ...block, arguments: mapArgumentStrings(block["arguments"], rewrite) }
          : block,
      );
      return { ...message, content } as PiMessage;
    },
  };
}
