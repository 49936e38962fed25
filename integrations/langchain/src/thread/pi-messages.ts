/**
 * A thread's LangChain messages as the pi messages a session store holds, and back.
 *
 * A session store's entries are pi session entries, so that recall, the CLI, export and pi itself
 * read a thread like any other session. Each message is written as the pi message that says the
 * same (text, reasoning as thinking, `tool_calls`, a `ToolMessage` as a tool result, the AI
 * message's `usage_metadata` as pi's usage), and the message itself rides along in
 * `details.langchain` as LangChain's own `StoredMessage` (`mapChatMessagesToStoredMessages`), so
 * reading the thread back gives the messages that were written, ids, tool calls and metadata
 * included. A pi message with no `details.langchain` (a session copied in from a pi file, a
 * compaction's summary) is rebuilt from its pi fields.
 */
import { CompactionError, describeValue, ErrorCodes, type PiMessage, type PiTextContent, type PiThinkingContent, type PiToolCall } from "@compaction/core";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type StoredMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { createLangChainAdapter } from "../langchain-adapter.js";

/** The key under `details` of a pi message that holds the LangChain `StoredMessage` it was written from. */
export const LANGCHAIN_DETAILS_KEY = "langchain";

const adapter = createLangChainAdapter();

function text(value: string): PiTextContent {
  return { type: "text", text: value };
}

function typeOf(message: BaseMessage): string {
  return typeof (message as { getType?: unknown }).getType === "function" ? message.getType() : String((message as { type?: unknown }).type);
}

/**
 * The pi message that says what `message` says, carrying LangChain's `StoredMessage` of it in
 * `details.langchain`. Throws COMPACTION_INPUT_INVALID naming `where` for a system message (the
 * system prompt is `createAgent({ systemPrompt })`'s, not the thread's) or a value that is not a
 * LangChain message.
 */
export function toPiMessage(message: BaseMessage, where: string, timestamp: number): PiMessage {
  if (typeof message !== "object" || message === null || typeof (message as { getType?: unknown }).getType !== "function") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/langchain thread: ${where} is not a LangChain message: found ${describeValue(message)}.`, {
      hint: "Pass @langchain/core messages (HumanMessage, AIMessage, ToolMessage).",
    });
  }
  const stored = mapChatMessagesToStoredMessages([message])[0]!;
  const details = { [LANGCHAIN_DETAILS_KEY]: stored };
  const facts = adapter.readFacts(message);
  switch (typeOf(message)) {
    case "system":
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `@compaction/langchain thread: ${where} is a system message; a thread keeps the conversation, not the system prompt.`, {
        hint: "Give the system prompt to createAgent({ systemPrompt }); it is sent with every call.",
      });
    case "ai": {
      const ai = message as AIMessage;
      const content: (PiTextContent | PiThinkingContent | PiToolCall)[] = [];
      if (facts.thinking !== "") content.push({ type: "thinking", thinking: facts.thinking });
      if (facts.text !== "") content.push(text(facts.text));
      for (const call of ai.tool_calls ?? []) content.push({ type: "toolCall", id: call.id ?? "", name: call.name, arguments: call.args });
      const usage = ai.usage_metadata;
      return {
        role: "assistant",
        content,
        timestamp,
        details,
        ...(usage === undefined
          ? {}
          : { usage: { input: usage.input_tokens, output: usage.output_tokens, cacheRead: 0, cacheWrite: 0, totalTokens: usage.total_tokens } }),
      } as PiMessage;
    }
    case "tool": {
      const tool = message as ToolMessage;
      return {
        role: "toolResult",
        toolCallId: tool.tool_call_id,
        toolName: tool.name ?? facts.toolName ?? "",
        content: [text(facts.text)],
        isError: facts.isError,
        timestamp,
        details,
      };
    }
    default:
      // A human message, or another kind (a generic ChatMessage): pi sends user content.
      return { role: "user", content: [text(facts.text)], timestamp, details } as PiMessage;
  }
}

/**
 * The LangChain messages of a thread's context read from its store: each as it was written
 * (`details.langchain`), the compaction's summary as the adapter's summary message, pi messages
 * written by others rebuilt from their fields. Throws COMPACTION_TRANSCRIPT_INVALID naming the
 * session and the message when one is neither.
 */
export function fromPiMessages(messages: readonly PiMessage[], location: string, asWritten?: ReadonlySet<PiMessage>): BaseMessage[] {
  return messages.map((message, index) => fromPiMessage(message, `message ${index + 1} of the context of ${location}`, asWritten));
}

/**
 * `asWritten`: the messages still as they were read (a call shaped to the window shrinks some:
 * those are rebuilt from their pi fields, which hold the shrunk text, not from `details.langchain`).
 */
function fromPiMessage(message: PiMessage, where: string, asWritten: ReadonlySet<PiMessage> | undefined): BaseMessage {
  if (typeof message !== "object" || message === null) throw corrupt(where, `is ${describeValue(message)}, not a pi message`);
  const details = (message as { details?: unknown }).details;
  const stored = typeof details === "object" && details !== null ? (details as Record<string, unknown>)[LANGCHAIN_DETAILS_KEY] : undefined;
  if (stored !== undefined && (asWritten === undefined || asWritten.has(message))) {
    const type = (stored as { type?: unknown } | null)?.type;
    if (typeof type !== "string" || typeof (stored as { data?: unknown }).data !== "object") {
      throw corrupt(where, `holds details.${LANGCHAIN_DETAILS_KEY} of type ${describeValue(type)} (expected a StoredMessage: { type, data })`);
    }
    try {
      return mapStoredMessagesToChatMessages([stored as StoredMessage])[0]!;
    } catch (error) {
      throw corrupt(where, `holds details.${LANGCHAIN_DETAILS_KEY} that LangChain cannot read (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  switch (message.role) {
    case "compactionSummary":
    case "branchSummary":
      return adapter.createSummary(message.summary);
    case "user":
    case "custom":
      return new HumanMessage({ content: piText(message.content) });
    case "bashExecution":
      return new HumanMessage({ content: `$ ${message.command}\n${message.output}` });
    case "assistant":
      return new AIMessage({
        content: message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n"),
        tool_calls: message.content.flatMap((part) => (part.type === "toolCall" ? [{ id: part.id, name: part.name, args: part.arguments, type: "tool_call" as const }] : [])),
      });
    case "toolResult":
      return new ToolMessage({ content: piText(message.content), tool_call_id: message.toolCallId, name: message.toolName, status: message.isError ? "error" : "success" });
    default:
      throw corrupt(where, `has role ${describeValue((message as { role?: unknown }).role)}, which no pi message has`);
  }
}

function piText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type}]`)).join("\n");
}

function corrupt(where: string, problem: string): CompactionError {
  return new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `@compaction/langchain thread: ${where} ${problem}; it cannot be read as a LangChain message.`, {
    hint: "The session holds entries no LangChain thread or pi wrote: inspect it with `compaction context inspect --session <location>`, or start a new thread.",
  });
}
