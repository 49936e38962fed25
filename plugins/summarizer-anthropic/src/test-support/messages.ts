/** Anthropic Messages answers for the test server. */
import type { Reply } from "@compaction/core/testing";

/** A successful message whose content is the given text blocks. */
export function message(texts: readonly string[], stopReason = "end_turn"): Reply {
  return {
    body: {
      id: "msg_test",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: texts.map((text) => ({ type: "text", text })),
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20 },
    },
  };
}

/** An Anthropic error answer `{ type: "error", error: { type, message } }`. */
export function apiError(status: number, type: string, text: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { type: "error", error: { type, message: text } } };
}
