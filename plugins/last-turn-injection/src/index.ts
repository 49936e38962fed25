/**
 * @compaction/plugin-last-turn-injection: keeps the last user/assistant exchange verbatim at the
 * end of the summary, so the agent never loses where it was.
 */
import { lastTurnInjection } from "./last-turn-injection.js";

export { PLUGIN_NAME, appendLastTurn, lastTurnInjection } from "./last-turn-injection.js";
export { IMAGE_PLACEHOLDER, extractLastTurn, type LastTurn } from "./extract-last-turn.js";
export {
  LAST_TURN_HEADING,
  TRUNCATION_MARKER,
  formatLastTurnSection,
  removeLastTurnSection,
  renderSection,
} from "./format-last-turn.js";
export { LAST_TURN_INJECTION_OPTIONS_SCHEMA, type LastTurnInjectionOptions } from "./options.js";

export default lastTurnInjection;
