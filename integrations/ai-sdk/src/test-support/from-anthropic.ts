/**
 * Real transcripts as AI SDK messages: the Claude Code fixtures hold Anthropic messages, which map
 * one to one onto `ModelMessage` (text, thinking -> reasoning, images, tool_use -> tool-call, a
 * user message of tool_result blocks -> a tool message, its other blocks -> a user message).
 */
import type { AnthropicContentBlock, AnthropicMessage } from "@compaction/core";
import type { ModelMessage, ToolContent, UserContent } from "ai";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block?.type === "text" ? String(block.text) : "")).join("\n");
}

export function toModelMessages(messages: readonly AnthropicMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  const names = new Map<string, string>();
  for (const message of messages) {
    const blocks: AnthropicContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant") {
      const content: Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string> = [];
      for (const block of blocks) {
        if (block.type === "text" && block.text !== "") content.push({ type: "text", text: block.text });
        else if (block.type === "thinking") content.push({ type: "reasoning", text: block.thinking });
        else if (block.type === "tool_use") {
          names.set(block.id, block.name);
          content.push({ type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input });
        }
      }
      if (content.length > 0) out.push({ role: "assistant", content });
      continue;
    }
    const results: ToolContent = [];
    const user: Exclude<UserContent, string> = [];
    for (const block of blocks) {
      if (block.type === "tool_result") {
        const value = textOf(block.content);
        const toolName = names.get(block.tool_use_id) ?? "tool";
        results.push({ type: "tool-result", toolCallId: block.tool_use_id, toolName, output: block.is_error === true ? { type: "error-text", value } : { type: "text", value } });
      } else if (block.type === "text" && block.text !== "") user.push({ type: "text", text: block.text });
      else if (block.type === "image") user.push({ type: "image", image: new URL("https://example.com/screenshot.png") });
    }
    if (results.length > 0) out.push({ role: "tool", content: results });
    if (user.length > 0) out.push({ role: "user", content: user });
  }
  return out;
}
