/**
 * Builders for pi-coding-agent messages in tests. Each call gets a fresh object (facts are
 * cached by identity), and tool-call ids are explicit so tests read like transcripts.
 */
import type { PiMessage } from "../messages/pi-adapter.js";

let clock = Date.UTC(2026, 0, 1);
const tick = () => (clock += 1000);

export function user(text: string, extra: Record<string, unknown> = {}): PiMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: tick(), ...extra } as PiMessage;
}

export interface CallSpec {
  readonly id: string;
  readonly name?: string;
  readonly args?: Record<string, unknown>;
}

export function assistant(text: string, calls: readonly CallSpec[] = [], extra: Record<string, unknown> = {}): PiMessage {
  const content: unknown[] = [];
  if (text) content.push({ type: "text", text });
  for (const c of calls) content.push({ type: "toolCall", id: c.id, name: c.name ?? "bash", arguments: c.args ?? { command: "ls" } });
  return { role: "assistant", content, timestamp: tick(), stopReason: calls.length ? "toolUse" : "stop", ...extra } as PiMessage;
}

export function toolResult(id: string, text: string, extra: Record<string, unknown> = {}): PiMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: "bash",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: tick(),
    ...extra,
  } as PiMessage;
}

export function summaryMessage(summary: string): PiMessage {
  return { role: "compactionSummary", summary, tokensBefore: 1000, timestamp: tick() } as PiMessage;
}

export { words } from "./builders.js";
