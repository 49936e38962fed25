import { CompactionError, ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { guardSummary } from "./guard-summary.js";

const options = { summarizer: "model", plugin: "safeguard", timeoutMs: 1000 };

describe("guardSummary", () => {
  it("resolves to the work's result", async () => {
    await expect(guardSummary(async () => "text", options)).resolves.toBe("text");
  });

  it("turns a rejection into COMPACTION_SUMMARIZER_FAILED naming the summarizer and the cause", async () => {
    const cause = new Error("HTTP 529 overloaded");
    const error = await guardSummary(() => Promise.reject(cause), options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CompactionError);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, plugin: "safeguard", cause });
    expect((error as Error).message).toMatch(/Summarizer 'model' failed: HTTP 529 overloaded\./);
  });

  it("turns a synchronous throw into COMPACTION_SUMMARIZER_FAILED", async () => {
    const work = (): Promise<string> => {
      throw new TypeError("not a function");
    };
    await expect(guardSummary(work, options)).rejects.toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
  });

  it("fails with COMPACTION_SUMMARIZER_FAILED when the work does not settle in time", async () => {
    const never = () => new Promise<string>(() => {});
    const error = await guardSummary(never, { ...options, timeoutMs: 20 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, plugin: "safeguard" });
    expect((error as Error).message).toMatch(/^Summarizer 'model' did not answer within 20 ms/);
  });

  it("aborts the signal it hands the work when the time runs out", async () => {
    let seen: AbortSignal | undefined;
    const hanging = (signal: AbortSignal) => {
      seen = signal;
      return new Promise<string>(() => {});
    };
    await guardSummary(hanging, { ...options, timeoutMs: 20 }).catch(() => undefined);
    expect(seen?.aborted).toBe(true);
  });

  it("waits without limit when timeoutMs is 0", async () => {
    const slow = () => new Promise<string>((resolve) => setTimeout(() => resolve("late"), 30));
    await expect(guardSummary(slow, { ...options, timeoutMs: 0 })).resolves.toBe("late");
  });

  it("is cancelled when the signal aborts while waiting", async () => {
    const controller = new AbortController();
    const never = () => new Promise<string>(() => {});
    const pending = guardSummary(never, { ...options, signal: controller.signal });
    controller.abort(new Error("user pressed escape"));
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });

  it("does not start the work when the signal is already aborted", async () => {
    let started = false;
    const work = async () => {
      started = true;
      return "x";
    };
    await expect(guardSummary(work, { ...options, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
    expect(started).toBe(false);
  });

  it("passes a cancellation reported by the work through as a cancellation", async () => {
    const work = () => Promise.reject(new CompactionError(ErrorCodes.CANCELLED, "aborted"));
    await expect(guardSummary(work, options)).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });
});
