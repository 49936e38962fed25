export type { Cut, CheckedCut } from "./cut.js";
export { checkCut, type CheckCutOptions } from "./check-cut.js";
export { findCutPoint, type FindCutPointOptions } from "./find-cut-point.js";
export { type MessageView, sumTokens, toolCallOwners, type ToolPairs, toolPairs } from "./message-view.js";
export { findTurnStartIndex, isCutPoint, lastUserIndex, turnStartIndices } from "./turns.js";
