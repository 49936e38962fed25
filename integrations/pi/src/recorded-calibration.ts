/**
 * The calibration the branch's newest compaction of ours recorded (`details.calibration`, see the
 * core's `CompactionEvent.calibration`), read from pi's session manager for send-time shaping:
 * right after a compaction that kept fewer than three usable pairs of usage figures, it sizes the
 * request's budget in the provider's measure, as it sizes the context manager's and the CLI's.
 */
import { readRecordedCalibration, type RecordedCalibration } from "@compaction/core";
import type { ExtensionContext } from "./pi-types.js";

/** Undefined when the branch has no compaction, its newest records none (pi's own, an older release's), or the host gives no branch. */
export function branchRecordedCalibration(ctx: Pick<ExtensionContext, "sessionManager">): RecordedCalibration | undefined {
  const manager = ctx.sessionManager as { getBranch?: () => ReadonlyArray<{ type?: string; details?: unknown }> } | undefined;
  if (typeof manager?.getBranch !== "function") return undefined;
  const branch = manager.getBranch();
  for (let index = branch.length - 1; index >= 0; index--) {
    const entry = branch[index];
    if (entry?.type !== "compaction") continue;
    const details = entry.details;
    return readRecordedCalibration(typeof details === "object" && details !== null ? (details as Record<string, unknown>)["calibration"] : undefined);
  }
  return undefined;
}
