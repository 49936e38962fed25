import { describe, expect, it } from "vitest";
import { ModelCallError, isRetryableStatus } from "./model-call-error.js";
import { retryDelay, retryModelCall, sleep } from "./retry.js";
import { retryAfterMs } from "./retry-after.js";

const quick = { baseDelayMs: 1, maxDelayMs: 5 };

describe("retryModelCall", () => {
  it("retries a retryable failure and resolves with the first success", async () => {
    let calls = 0;
    const value = await retryModelCall(
      async () => {
        calls++;
        if (calls < 3) throw new ModelCallError("HTTP 503", { status: 503, retryable: true });
        return "ok";
      },
      { maxRetries: 3, ...quick },
    );
    expect(value).toBe("ok");
    expect(calls).toBe(3);
  });

  it("gives up after maxRetries retries with the last error", async () => {
    let calls = 0;
    const error = await retryModelCall(
      async () => {
        calls++;
        throw new ModelCallError(`HTTP 500 #${calls}`, { status: 500, retryable: true });
      },
      { maxRetries: 2, ...quick },
    ).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect((error as Error).message).toBe("HTTP 500 #3");
  });

  it("does not retry a failure that is not retryable, nor an error of another kind", async () => {
    let calls = 0;
    await expect(
      retryModelCall(async () => {
        calls++;
        throw new ModelCallError("HTTP 400", { status: 400 });
      }, { maxRetries: 3, ...quick }),
    ).rejects.toThrow("HTTP 400");
    await expect(
      retryModelCall(async () => {
        calls++;
        throw new TypeError("bug");
      }, { maxRetries: 3, ...quick }),
    ).rejects.toThrow("bug");
    expect(calls).toBe(2);
  });

  it("tells onRetry the attempt, the wait and the error before each wait", async () => {
    const seen: number[] = [];
    await retryModelCall(
      async (attempt) => {
        if (attempt < 2) throw new ModelCallError("busy", { status: 429, retryable: true, retryAfterMs: 3 });
        return "ok";
      },
      { maxRetries: 3, ...quick, onRetry: ({ attempt, delayMs }) => seen.push(attempt * 100 + delayMs) },
    );
    expect(seen).toEqual([3, 103]);
  });

  it("stops waiting as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const pending = retryModelCall(
      async () => {
        throw new ModelCallError("busy", { status: 429, retryable: true });
      },
      { maxRetries: 3, baseDelayMs: 60_000, maxDelayMs: 60_000, signal: controller.signal },
    );
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });
});

describe("retryDelay", () => {
  it("doubles with each retry, half fixed and half random", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 10_000 };
    expect(retryDelay(0, {}, { ...options, random: () => 0 })).toBe(50);
    expect(retryDelay(0, {}, { ...options, random: () => 0.999999 })).toBe(100);
    expect(retryDelay(3, {}, { ...options, random: () => 0 })).toBe(400);
    expect(retryDelay(3, {}, { ...options, random: () => 0.5 })).toBe(600);
  });

  it("never waits longer than maxDelayMs", () => {
    expect(retryDelay(20, {}, { baseDelayMs: 1000, maxDelayMs: 5000, random: () => 0.999999 })).toBe(5000);
  });

  it("waits what the server's Retry-After asked for, capped by maxDelayMs", () => {
    expect(retryDelay(0, { retryAfterMs: 1234 }, { baseDelayMs: 1, maxDelayMs: 5000 })).toBe(1234);
    expect(retryDelay(0, { retryAfterMs: 90_000 }, { baseDelayMs: 1, maxDelayMs: 5000 })).toBe(5000);
  });
});

describe("retryAfterMs", () => {
  it("reads retry-after-ms, Retry-After in seconds and as an HTTP date", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": "0.5" }))).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(3000);
  });

  it("is undefined without a readable header", () => {
    expect(retryAfterMs(new Headers())).toBeUndefined();
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
  });
});

describe("isRetryableStatus", () => {
  it.each([
    [408, true],
    [409, true],
    [429, true],
    [500, true],
    [503, true],
    [529, true],
    [400, false],
    [401, false],
    [404, false],
    [422, false],
  ])("HTTP %i retryable: %s", (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected);
  });
});

describe("sleep", () => {
  it("rejects at once with the reason of an aborted signal", async () => {
    await expect(sleep(10_000, AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
  });
});
