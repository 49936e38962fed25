/**
 * @compaction/plugin-summarizer-anthropic: summaries written by a model behind the Anthropic
 * Messages API.
 */
import { summarizerAnthropic } from "./summarizer-anthropic.js";

export { ANTHROPIC_API_KEY_ENV, PLUGIN_NAME, createAnthropicSummarizer, keyVariable, summarizerAnthropic } from "./summarizer-anthropic.js";
export {
  ANTHROPIC_VERSION,
  type MessagesSettings,
  messagesBody,
  messagesErrorMessage,
  messagesHeaders,
  readMessage,
} from "./messages-api.js";
export {
  SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA,
  type SummarizerAnthropicOptions,
  type SummarizerAnthropicOptionsInput,
} from "./options.js";

export default summarizerAnthropic;
