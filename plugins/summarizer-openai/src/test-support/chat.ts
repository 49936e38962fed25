/** OpenAI chat completions answers for the test server. */
import type { Reply } from "@compaction/core/testing";

/** A successful chat completion whose message content is `text`. */
export function completion(text: string, finishReason = "stop"): Reply {
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 1767225600,
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: finishReason }],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    },
  };
}

/** An OpenAI-style error answer. */
export function apiError(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { error: { message, type: "server_error", code: null } } };
}
