/**
 * @compaction/plugin-summarizer-openai: summaries written by a model behind an OpenAI-compatible
 * chat completions API (OpenAI, OpenRouter, llama.cpp, vLLM, Ollama).
 */
import { summarizerOpenAI } from "./summarizer-openai.js";

export { OPENAI_API_KEY_ENV, PLUGIN_NAME, createOpenAISummarizer, keyVariable, summarizerOpenAI } from "./summarizer-openai.js";
export { type ChatCompletionsSettings, chatCompletionsBody, chatCompletionsErrorMessage, readChatCompletion } from "./chat-completions.js";
export { SUMMARIZER_OPENAI_OPTIONS_SCHEMA, type SummarizerOpenAIOptions, type SummarizerOpenAIOptionsInput } from "./options.js";

export default summarizerOpenAI;
