import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { branchRecordedCalibration } from "./recorded-calibration.js";

const recorded = { ratio: 1.288, perMessage: 10.3, samples: 16, model: "anthropic/claude-opus-4-5" };
const message = { type: "message", id: "m1" };
const ours = (calibration: unknown) => ({ type: "compaction", id: "c1", details: { tokensAfterCompaction: 37_961, calibration } });
const ctx = (branch: unknown[] | undefined) => ({ sessionManager: branch === undefined ? {} : { getBranch: () => branch } }) as unknown as Pick<ExtensionContext, "sessionManager">;

describe("branchRecordedCalibration", () => {
  it("reads the calibration the branch's newest compaction recorded", () => {
    expect(branchRecordedCalibration(ctx([message, ours({ ratio: 2, perMessage: 0, samples: 3 }), message, ours(recorded), message]))).toEqual(recorded);
  });

  it("is undefined when the newest compaction records none (pi's own, an older release's) or an unusable one, and with no compaction or no branch", () => {
    expect(branchRecordedCalibration(ctx([ours(recorded), { type: "compaction", id: "c2", summary: "pi's own" }]))).toBeUndefined();
    expect(branchRecordedCalibration(ctx([ours({ ratio: 99, perMessage: 0, samples: 3 })]))).toBeUndefined();
    expect(branchRecordedCalibration(ctx([message]))).toBeUndefined();
    expect(branchRecordedCalibration(ctx(undefined))).toBeUndefined();
  });
});
