/**
 * The real transcripts as pi messages, ready to replay into a pi session file.
 *
 * - pi sessions: every message entry in file order, with the provider's `usage` removed: it
 *   describes the context of the original run, not the replay's smaller one, and would make the
 *   context look full (or empty) whatever the replay kept.
 * - Claude Code transcripts: the main chain (`loadClaudeMessages`) converted block by block:
 *   text stays text, `tool_use` becomes a pi `toolCall`, each `tool_result` a pi `toolResult`
 *   message (named after the call it answers), user text a user message after its results.
 *   Thinking blocks are left out (pi's recall does not index them either); images become
 *   "[image]". Claude Code keeps timestamps on its lines, not its messages, so messages are
 *   stamped one second apart.
 */
import type { AnthropicContentBlock, AnthropicMessage, PiMessage, PiToolCall } from "@compaction/core";

/** pi messages without provider usage (the replay's own, for every format that has a `usage` field). */
export { withoutUsage } from "@compaction/replay";

/** Claude Code main-chain messages as pi messages (see the file comment for the rules). */
export function claudeToPi(messages: readonly AnthropicMessage[], start = Date.UTC(2025, 0, 1)): PiMessage[] {
  const toolNames = new Map<string, string>();
  const out: PiMessage[] = [];
  let clock = start;
  const tick = (): number => (clock += 1000);
  for (const message of messages) {
    const blocks: AnthropicContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant") {
      const content: ({ type: "text"; text: string } | PiToolCall)[] = [];
      for (const block of blocks) {
        if (block.type === "text" && typeof block.text === "string" && block.text !== "") content.push({ type: "text", text: block.text });
        if (block.type === "tool_use") {
          toolNames.set(block.id, block.name);
          content.push({ type: "toolCall", id: block.id, name: block.name, arguments: (block.input ?? {}) as Record<string, unknown> });
        }
      }
      if (content.length === 0) continue;
      out.push({ role: "assistant", content, stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop", timestamp: tick() });
      continue;
    }
    const texts: string[] = [];
    for (const block of blocks) {
      if (block.type === "tool_result") {
        out.push({
          role: "toolResult",
          toolCallId: block.tool_use_id,
          toolName: toolNames.get(block.tool_use_id) ?? "unknown",
          content: [{ type: "text", text: resultText(block.content) }],
          isError: block.is_error === true,
          timestamp: tick(),
        });
      } else if (block.type === "text" && typeof block.text === "string" && block.text !== "") {
        texts.push(block.text);
      } else if (block.type === "image") {
        texts.push("[image]");
      }
    }
    if (texts.length > 0) out.push({ role: "user", content: [{ type: "text", text: texts.join("\n\n") }], timestamp: tick() });
  }
  return out;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: unknown; text?: unknown }) => (block.type === "text" && typeof block.text === "string" ? block.text : block.type === "image" ? "[image]" : ""))
    .filter((text) => text !== "")
    .join("\n");
}
