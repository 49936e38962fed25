/**
 * Message builders for the three built-in formats with one vocabulary, so a plugin's tests can
 * run the same conversation through every adapter:
 *
 * ```ts
 * import { builders, FORMATS } from "@compaction/core/testing";
 * for (const format of FORMATS) {
 *   const b = builders(format);
 *   const messages = [b.user("fix it"), b.assistant("running", [{ id: "c1" }]), ...b.toolResults([{ id: "c1", text: "ok" }])];
 * }
 * ```
 * Every call returns a fresh object (facts are cached by identity).
 */
import type { MessageAdapter } from "../messages/adapter.js";
import { createAnthropicAdapter } from "../messages/anthropic-adapter.js";
import { createOpenAIAdapter } from "../messages/openai-adapter.js";
import { createPiAdapter } from "../messages/pi-adapter.js";

export type Format = "pi" | "openai" | "anthropic";
export const FORMATS: readonly Format[] = Object.freeze(["pi", "openai", "anthropic"]);

export interface CallSpec {
  readonly id: string;
  readonly name?: string;
  readonly args?: Record<string, unknown>;
}

export interface ResultSpec {
  readonly id: string;
  readonly text: string;
  readonly isError?: boolean;
  readonly name?: string;
}

export interface Builders<T = unknown> {
  readonly format: Format;
  readonly adapter: MessageAdapter<T>;
  /** A system prompt message, or `undefined` for formats that keep it outside the messages (pi, Anthropic). */
  system(text: string): T | undefined;
  user(text: string): T;
  /** An assistant message with optional text and tool calls (default tool `bash`, args `{ command: "ls" }`). */
  assistant(text: string, calls?: readonly CallSpec[]): T;
  /** The results of one assistant step: one message each (pi, OpenAI) or one user message with every block (Anthropic). */
  toolResults(results: readonly ResultSpec[]): T[];
  /** A user message with an image and optional text. */
  image(text?: string): T;
  /** A copy of `message` marked pinned. */
  pin(message: T): T;
}

let clock = Date.UTC(2026, 0, 1);
const tick = () => (clock += 1000);

const piBuilders: Builders<any> = {
  format: "pi",
  adapter: createPiAdapter(),
  system: () => undefined,
  user: (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: tick() }),
  assistant: (text, calls = []) => ({
    role: "assistant",
    content: [
      ...(text ? [{ type: "text", text }] : []),
      ...calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name ?? "bash", arguments: c.args ?? { command: "ls" } })),
    ],
    stopReason: calls.length > 0 ? "toolUse" : "stop",
    timestamp: tick(),
  }),
  toolResults: (results) =>
    results.map((r) => ({
      role: "toolResult",
      toolCallId: r.id,
      toolName: r.name ?? "bash",
      content: [{ type: "text", text: r.text }],
      isError: r.isError === true,
      timestamp: tick(),
    })),
  image: (text = "") => ({
    role: "user",
    content: [...(text ? [{ type: "text", text }] : []), { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }],
    timestamp: tick(),
  }),
  pin: (message) => ({ ...message, pinned: true }),
};

const openaiBuilders: Builders<any> = {
  format: "openai",
  adapter: createOpenAIAdapter(),
  system: (text) => ({ role: "system", content: text }),
  user: (text) => ({ role: "user", content: text }),
  assistant: (text, calls = []) => ({
    role: "assistant",
    content: text || null,
    ...(calls.length > 0
      ? {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name ?? "bash", arguments: JSON.stringify(c.args ?? { command: "ls" }) },
          })),
        }
      : {}),
  }),
  toolResults: (results) =>
    results.map((r) => ({ role: "tool", tool_call_id: r.id, content: r.text, ...(r.isError ? { isError: true } : {}) })),
  image: (text = "") => ({
    role: "user",
    content: [...(text ? [{ type: "text", text }] : []), { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }],
  }),
  pin: (message) => ({ ...message, pinned: true }),
};

const anthropicBuilders: Builders<any> = {
  format: "anthropic",
  adapter: createAnthropicAdapter(),
  system: () => undefined,
  user: (text) => ({ role: "user", content: text }),
  assistant: (text, calls = []) => ({
    role: "assistant",
    content: [
      ...(text ? [{ type: "text", text }] : []),
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name ?? "bash", input: c.args ?? { command: "ls" } })),
    ],
  }),
  toolResults: (results) =>
    results.length === 0
      ? []
      : [
          {
            role: "user",
            content: results.map((r) => ({ type: "tool_result", tool_use_id: r.id, content: r.text, ...(r.isError ? { is_error: true } : {}) })),
          },
        ],
  image: (text = "") => ({
    role: "user",
    content: [...(text ? [{ type: "text", text }] : []), { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }],
  }),
  pin: (message) => ({ ...message, pinned: true }),
};

const BUILDERS: Readonly<Record<Format, Builders<any>>> = { pi: piBuilders, openai: openaiBuilders, anthropic: anthropicBuilders };

export function builders(format: Format): Builders<any> {
  return BUILDERS[format];
}

/** A word repeated `n` times: about `n` tokens with tiktoken, `1.5 n` with chars/4. */
export function words(n: number, word = "alpha"): string {
  return Array.from({ length: n }, () => word).join(" ");
}
