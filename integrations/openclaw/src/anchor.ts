/**
 * Finding a message again. OpenClaw hands a context engine its transcript's messages on every
 * call, without entry ids, so a compaction remembers the first message it kept by what it is:
 * its role, its timestamp and a digest of its content. `assemble` looks for that message in
 * the messages OpenClaw sends and keeps from there.
 */
import { createHash } from "node:crypto";
import type { AgentMessage } from "./openclaw-api.js";

export interface MessageAnchor {
  readonly role: string;
  readonly timestamp: number | null;
  /** sha256 of the message's content (and tool-call id), hex, first 32 characters. */
  readonly digest: string;
}

export function anchorOf(message: AgentMessage): MessageAnchor {
  const timestamp = typeof message.timestamp === "number" ? message.timestamp : null;
  const identity = { content: message["content"] ?? message["summary"] ?? null, toolCallId: message["toolCallId"] ?? null };
  const digest = createHash("sha256").update(JSON.stringify(identity)).digest("hex").slice(0, 32);
  return { role: message.role, timestamp, digest };
}

export function sameAnchor(a: MessageAnchor, b: MessageAnchor): boolean {
  return a.role === b.role && a.timestamp === b.timestamp && a.digest === b.digest;
}

/** The index of the last message that is `anchor`, or -1. */
export function findAnchor(messages: readonly AgentMessage[], anchor: MessageAnchor): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (sameAnchor(anchorOf(messages[index] as AgentMessage), anchor)) return index;
  }
  return -1;
}
