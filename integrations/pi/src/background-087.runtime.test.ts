/**
 * Background compaction in today's pi (`@earendil-works/pi-coding-agent` 0.87.1, Node >= 22.19),
 * the twin of ./background.runtime.test.ts (pi 0.73.1; see test-support/background-scenario.ts):
 * prepared at the end of a turn, returned at once from `session_before_compact` while it applies.
 */
import { describe, it } from "vitest";
import { autoCompactionReturnsPrepared, compactReturnsPrepared, focusDropsPrepared, offCompactsWhenAsked, otherBranchDropsPrepared } from "./test-support/background-cases.js";
import { OVERFLOW_ERROR, type StartRuntime } from "./test-support/background-scenario.js";
import { createRuntimeSession087, PI_087_UNSUPPORTED, PI_087_VERSION } from "./test-support/pi-087-session.js";

const start: StartRuntime = async (session, { contextWindow, extension, overflowSecond }) => {
  const ai = await import("@earendil-works/pi-ai");
  const ok = () => ai.fauxAssistantMessage("ok");
  const runtime = await createRuntimeSession087(session, {
    model: { contextWindow },
    extensions: [extension as never],
    ...(overflowSecond ? { settings: { compaction: { enabled: true } }, responses: [ok(), ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: OVERFLOW_ERROR }), ok(), ok()] } : {}),
  });
  return runtime as unknown as Awaited<ReturnType<StartRuntime>>;
};

const title = `background compaction in pi ${PI_087_VERSION}'s runtime${PI_087_UNSUPPORTED === undefined ? "" : ` (skipped: ${PI_087_UNSUPPORTED})`}`;

describe.skipIf(PI_087_UNSUPPORTED !== undefined)(title, () => {
  it("session.compact() returns the compaction prepared at the end of a turn at once: no summary asked for then, no model call, the messages appended since kept after it", () => compactReturnsPrepared(start), 120_000);
  it("pi's automatic compaction (its overflow recovery) gets the prepared compaction at once, and pi retries the turn", () => autoCompactionReturnsPrepared(start), 120_000);
  it("/compact with a focus drops the prepared compaction, says so, and asks the model for a new summary", () => focusDropsPrepared(start), 120_000);
  it("a compaction prepared on a branch pi has left is dropped when pi compacts the branch it is on", () => otherBranchDropsPrepared(start), 120_000);
  it("background: false prepares nothing: session.compact() asks the model itself", () => offCompactsWhenAsked(start), 120_000);
});
