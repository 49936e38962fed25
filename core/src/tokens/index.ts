/** Token counting: the TokenCounter contract, its two implementations, and per-message counts. */
export { IMAGE_TOKENS, type TokenCounter } from "./token-counter.js";
export {
  createTiktokenCounter,
  DEFAULT_ENCODING,
  tiktokenEncodingNames,
  type TiktokenCounterOptions,
} from "./tiktoken-counter.js";
export { createEstimateCounter, estimateStringTokens } from "./estimate-counter.js";
export { MessageTokenCounter, messageTokenText, type ContextTokens } from "./message-tokens.js";
