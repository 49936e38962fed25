/**
 * How degraded a context is likely to be after repeated compactions: each summary of a summary
 * loses detail, so after a few the better move is a fresh session seeded from the old one.
 */

export type DegradationRisk = "low" | "medium" | "high";

/** From this many compactions on a branch the risk is medium (a soft warning). */
export const DEGRADATION_SOFT_AT = 3;
/** From this many compactions on a branch the risk is high (a hard warning). */
export const DEGRADATION_HARD_AT = 5;

/** Low below 3 compactions, medium from 3, high from 5. */
export function degradationRisk(count: number): DegradationRisk {
  if (count >= DEGRADATION_HARD_AT) return "high";
  if (count >= DEGRADATION_SOFT_AT) return "medium";
  return "low";
}

/** What to tell the user at each risk level (null when there is nothing to say). */
export function riskAdvice(risk: DegradationRisk): string | null {
  if (risk === "high") {
    return "Export what matters and start a fresh session (compaction context export state.json, then compaction context import state.json): summaries of summaries have lost detail.";
  }
  if (risk === "medium") return "Several compactions so far; consider a fresh start soon (compaction context export, then context import).";
  return null;
}
