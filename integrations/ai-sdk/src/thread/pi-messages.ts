/**
 * A thread's `ModelMessage`s as the pi messages a session store holds, and back.
 *
 * A session store's entries are pi session entries, so that recall, the CLI, export and pi itself
 * read a thread like any other session. Each message is written as the pi message that says the
 * same (text, reasoning as thinking, tool calls, one `toolResult` per tool-result part), and the
 * `ModelMessage` itself rides along in `details.aiSdk`, JSON-safe (bytes as base64, URLs as
 * strings), so reading the thread back gives the messages that were written, `providerOptions`
 * and all. A pi message with no `details.aiSdk` (a session copied in from a pi file, a summary)
 * is rebuilt from its pi fields.
 */
import { CompactionError, describeValue, ErrorCodes, type PiMessage, type PiTextContent, type PiToolCall } from "@compaction/core";
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserModelMessage } from "ai";
import { createAiSdkAdapter } from "../ai-sdk-adapter.js";

/** The key under `details` of a pi message that holds the `ModelMessage` it was written from. */
export const AI_SDK_DETAILS_KEY = "aiSdk";

type Part = Record<string, unknown>;
type ToolPart = ToolModelMessage["content"][number];

const adapter = createAiSdkAdapter();

/** Bytes as base64 and URLs as their text: what JSON keeps, and what the AI SDK accepts back as data. */
function jsonSafe(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof ArrayBuffer) return Buffer.from(new Uint8Array(value)).toString("base64");
  if (value instanceof URL) return value.href;
  return value;
}

function plain<T>(message: T): T {
  return JSON.parse(JSON.stringify(message, jsonSafe)) as T;
}

function invalidMessage(where: string, problem: string, hint: string): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/ai-sdk thread: ${where} ${problem}`, { hint });
}

function partsOf(content: unknown): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content.filter((part) => typeof part === "object" && part !== null) as Part[]) : [];
}

function describePart(part: Part): string {
  const name = typeof part["filename"] === "string" ? ` ${part["filename"]}` : "";
  const type = typeof part["mediaType"] === "string" ? ` (${part["mediaType"]})` : "";
  return `[${String(part["type"])}${name}${type}]`;
}

function text(value: string): PiTextContent {
  return { type: "text", text: value };
}

/** What a tool-result part's output says, as text. */
function outputText(output: unknown): { readonly text: string; readonly isError: boolean } {
  if (typeof output !== "object" || output === null) return { text: JSON.stringify(output) ?? "", isError: false };
  const { type, value } = output as { type?: unknown; value?: unknown; reason?: unknown };
  const isError = type === "error-text" || type === "error-json" || type === "execution-denied";
  if (type === "text" || type === "error-text") return { text: String(value ?? ""), isError };
  if (type === "execution-denied") return { text: `Execution denied${typeof (output as { reason?: unknown }).reason === "string" ? `: ${(output as { reason: string }).reason}` : "."}`, isError };
  if (type === "content" && Array.isArray(value)) {
    return { text: (value as Part[]).map((part) => (part["type"] === "text" ? String(part["text"] ?? "") : describePart(part))).join("\n"), isError };
  }
  return { text: JSON.stringify(value) ?? "", isError };
}

/**
 * The pi messages that say what `message` says, each carrying the JSON-safe `ModelMessage` in
 * `details.aiSdk` (for a tool message: one pi `toolResult` per tool-result part, each with a tool
 * message of that one part). Throws COMPACTION_INPUT_INVALID for a system message (the system
 * prompt goes to `generateText({ system })`, not into a thread) or a message that is not a
 * `ModelMessage`, naming `where`.
 */
export function toPiMessages(message: ModelMessage, where: string, timestamp: number): PiMessage[] {
  if (typeof message !== "object" || message === null) {
    throw invalidMessage(where, `is not a ModelMessage: found ${describeValue(message)}.`, "Append the messages of result.response.messages (ai 6) or result.responseMessages (ai 7), or { role: 'user', content }.");
  }
  const stored = plain(message);
  const details = { [AI_SDK_DETAILS_KEY]: stored };
  switch (message.role) {
    case "system":
      throw invalidMessage(where, "is a system message; a thread keeps the conversation, not the system prompt.", "Pass the system prompt as generateText({ system }) (or the agent's instructions) on every request instead.");
    case "user": {
      const content = partsOf(message.content).map((part) => (part["type"] === "text" ? text(String(part["text"] ?? "")) : text(describePart(part))));
      return [{ role: "user", content, timestamp, details } as PiMessage];
    }
    case "assistant": {
      const content: (PiTextContent | PiToolCall | { type: "thinking"; thinking: string })[] = [];
      for (const part of partsOf(message.content)) {
        if (part["type"] === "text") content.push(text(String(part["text"] ?? "")));
        else if (part["type"] === "reasoning") content.push({ type: "thinking", thinking: String(part["text"] ?? "") });
        else if (part["type"] === "tool-call") content.push(toolCall(part));
        else if (part["type"] === "tool-result") content.push(text(`[${String(part["toolName"])} result] ${outputText(part["output"]).text}`));
        else content.push(text(describePart(part)));
      }
      return [{ role: "assistant", content, timestamp, details } as PiMessage];
    }
    case "tool": {
      const parts = partsOf(message.content) as ToolPart[];
      if (parts.length === 0) throw invalidMessage(where, "is a tool message with no parts.", "Append the tool messages the AI SDK returned, as they are.");
      return parts.map((part): PiMessage => {
        const one = { [AI_SDK_DETAILS_KEY]: plain({ ...message, content: [part] }) };
        if (part.type === "tool-result") {
          const output = outputText(part.output);
          return { role: "toolResult", toolCallId: part.toolCallId, toolName: part.toolName, content: [text(output.text)], isError: output.isError, timestamp, details: one };
        }
        // A tool approval response answers the assistant message that asked: pi has no such message,
        // so it is kept as a custom message (its text says what was decided).
        return { role: "custom", customType: "ai-sdk-tool-approval", content: [text(JSON.stringify(part))], display: false, timestamp, details: one };
      });
    }
    default:
      throw invalidMessage(where, `has role ${describeValue((message as { role?: unknown }).role)}; expected user, assistant or tool.`, "Append ModelMessages: result.response.messages (ai 6), result.responseMessages (ai 7), or { role: 'user', content }.");
  }
}

function toolCall(part: Part): PiToolCall {
  const input = part["input"];
  const args = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
  return { type: "toolCall", id: String(part["toolCallId"]), name: String(part["toolName"]), arguments: args };
}

/**
 * The `ModelMessage`s of a thread's context read from its store: each message as it was written
 * (`details.aiSdk`), the compaction's summary as the adapter's summary message, and pi messages
 * written by others rebuilt from their fields. Throws COMPACTION_TRANSCRIPT_INVALID naming the
 * session and the message when one is neither.
 */
export function fromPiMessages(messages: readonly PiMessage[], location: string, asWritten?: ReadonlySet<PiMessage>): ModelMessage[] {
  return messages.map((message, index) => fromPiMessage(message, `message ${index + 1} of the context of ${location}`, asWritten));
}

/**
 * `asWritten`: the messages still as they were read (a request shaped to the window shrinks some:
 * those are rebuilt from their pi fields, which hold the shrunk text, not from `details.aiSdk`).
 */
function fromPiMessage(message: PiMessage, where: string, asWritten: ReadonlySet<PiMessage> | undefined): ModelMessage {
  if (typeof message !== "object" || message === null) throw corrupt(where, `is ${describeValue(message)}, not a pi message`);
  const details = (message as { details?: unknown }).details;
  const stored = typeof details === "object" && details !== null ? (details as Record<string, unknown>)[AI_SDK_DETAILS_KEY] : undefined;
  if (stored !== undefined && (asWritten === undefined || asWritten.has(message))) {
    const role = (stored as { role?: unknown } | null)?.role;
    if (role !== "user" && role !== "assistant" && role !== "tool") throw corrupt(where, `holds details.${AI_SDK_DETAILS_KEY} with role ${describeValue(role)} (expected user, assistant or tool)`);
    return stored as ModelMessage;
  }
  switch (message.role) {
    case "compactionSummary":
    case "branchSummary":
      return adapter.createSummary(message.summary);
    case "user":
    case "custom":
      return { role: "user", content: piText(message.content) } satisfies UserModelMessage;
    case "bashExecution":
      return { role: "user", content: `$ ${message.command}\n${message.output}` } satisfies UserModelMessage;
    case "assistant":
      return {
        role: "assistant",
        content: message.content.map((part) => {
          if (part.type === "thinking") return { type: "reasoning" as const, text: part.thinking };
          if (part.type === "toolCall") return { type: "tool-call" as const, toolCallId: part.id, toolName: part.name, input: part.arguments };
          return { type: "text" as const, text: part.text };
        }),
      } satisfies AssistantModelMessage;
    case "toolResult": {
      const value = piText(message.content);
      return {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: message.toolCallId, toolName: message.toolName, output: message.isError ? { type: "error-text", value } : { type: "text", value } }],
      } satisfies ToolModelMessage;
    }
    default:
      throw corrupt(where, `has role ${describeValue((message as { role?: unknown }).role)}, which no pi message has`);
  }
}

function piText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type}]`)).join("\n");
}

function corrupt(where: string, problem: string): CompactionError {
  return new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `@compaction/ai-sdk thread: ${where} ${problem}; it cannot be sent as a ModelMessage.`, {
    hint: "The session holds entries no AI SDK thread or pi wrote: inspect it with `compaction context inspect --session <location>`, or start a new thread.",
  });
}
