/** Message adapters: the MessageAdapter contract and the pi, OpenAI and Anthropic adapters. */
export * from "./adapter.js";
export * from "./pi-adapter.js";
export * from "./openai-adapter.js";
export * from "./anthropic-adapter.js";
