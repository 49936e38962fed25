/**
 * @compaction/plugin-summarizer-ai-sdk: summaries written by any AI SDK LanguageModel (every
 * provider the AI SDK has, local ones included).
 */
import { summarizerAiSdk } from "./summarizer-ai-sdk.js";

export { createAiSdkSummarizer, PLUGIN_NAME, summarizerAiSdk, toModelCallError } from "./summarizer-ai-sdk.js";
export { SUMMARIZER_AI_SDK_OPTIONS_SCHEMA, type SummarizerAiSdkOptions, type SummarizerAiSdkOptionsInput } from "./options.js";

export default summarizerAiSdk;
