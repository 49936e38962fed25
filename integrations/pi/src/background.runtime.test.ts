/**
 * Background compaction in pi 0.73.1's real runtime (see test-support/background-scenario.ts):
 * prepared at the end of a turn, returned at once from `session_before_compact` while it applies.
 */
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { describe, it } from "vitest";
import { autoCompactionReturnsPrepared, compactReturnsPrepared, focusDropsPrepared, offCompactsWhenAsked, otherBranchDropsPrepared } from "./test-support/background-cases.js";
import { OVERFLOW_ERROR, type StartRuntime } from "./test-support/background-scenario.js";
import { createRuntimeSession } from "./test-support/pi-session.js";

const start: StartRuntime = async (session, { contextWindow, extension, overflowSecond }) => {
  const ok = () => fauxAssistantMessage("ok");
  const responses = overflowSecond ? [ok(), fauxAssistantMessage("", { stopReason: "error", errorMessage: OVERFLOW_ERROR }), ok(), ok()] : undefined;
  const runtime = await createRuntimeSession(session, { contextWindow, extensions: [extension as never], autoCompaction: overflowSecond, ...(responses === undefined ? {} : { responses }) });
  return runtime as unknown as Awaited<ReturnType<StartRuntime>>;
};

describe("background compaction in pi 0.73.1's runtime", () => {
  it("session.compact() returns the compaction prepared at the end of a turn at once: no summary asked for then, no model call, the messages appended since kept after it", () => compactReturnsPrepared(start), 120_000);
  it("pi's automatic compaction (its overflow recovery) gets the prepared compaction at once, and pi retries the turn", () => autoCompactionReturnsPrepared(start), 120_000);
  it("/compact with a focus drops the prepared compaction, says so, and asks the model for a new summary", () => focusDropsPrepared(start), 120_000);
  it("a compaction prepared on a branch pi has left is dropped when pi compacts the branch it is on", () => otherBranchDropsPrepared(start), 120_000);
  it("background: false prepares nothing: session.compact() asks the model itself", () => offCompactsWhenAsked(start), 120_000);
});
