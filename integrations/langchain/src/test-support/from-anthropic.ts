/**
 * Real Claude Code transcripts (Anthropic messages) as the LangChain messages an agent built on
 * @langchain/anthropic would hold: user text -> HumanMessage, each tool_result -> a ToolMessage,
 * assistant blocks -> an AIMessage with its text and thinking blocks and `tool_calls`.
 */
import type { AnthropicMessage } from "@compaction/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

type Block = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[])
    .filter((block) => block["type"] === "text" && typeof block["text"] === "string")
    .map((block) => block["text"] as string)
    .join("\n");
}

export function toLangChain(messages: readonly AnthropicMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (const message of messages) {
    const content = message.content;
    if (message.role === "user") {
      if (typeof content === "string") {
        out.push(new HumanMessage(content));
        continue;
      }
      const blocks = content as unknown as Block[];
      for (const block of blocks) {
        if (block["type"] === "tool_result") {
          out.push(
            new ToolMessage({
              tool_call_id: String(block["tool_use_id"]),
              content: textOf(block["content"]),
              ...(block["is_error"] === true ? { status: "error" as const } : {}),
            }),
          );
        }
      }
      const text = textOf(blocks);
      if (text !== "") out.push(new HumanMessage(text));
      continue;
    }
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : (content as unknown as Block[]);
    const kept = blocks.filter((block) => block["type"] === "text" || block["type"] === "thinking");
    const toolCalls = blocks
      .filter((block) => block["type"] === "tool_use")
      .map((block) => ({ id: String(block["id"]), name: String(block["name"]), args: (block["input"] ?? {}) as Record<string, unknown>, type: "tool_call" as const }));
    out.push(new AIMessage({ content: kept as never, tool_calls: toolCalls }));
  }
  return out;
}
