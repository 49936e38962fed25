import { appendFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { ErrorCodes } from "@compaction/core";
import { rejection } from "@compaction/core/testing";
import { autoCompactEntry } from "../session-settings.js";
import { buildSession, sessionOps, sessionText, tmpSessionDir } from "../test-support/pi-sessions.js";
import { openPiFileStore } from "./pi-file-store.js";

const tmp = tmpSessionDir();
afterAll(() => tmp.cleanup());
let count = 0;

describe("PiFileStore's branch facts from the boundary", () => {
  it("equal the whole branch's on generated sessions, before and after appends", async () => {
    await fc.assert(
      fc.asyncProperty(sessionOps, sessionOps, fc.boolean(), async (before, after, setting) => {
        const first = buildSession(before, 3);
        const path = tmp.file(`g${++count}.jsonl`, sessionText(first.lines));
        const store = await openPiFileStore(path);
        const check = async (): Promise<void> => {
          const whole = await store.branch();
          const fast = await store.branch({ fromBoundary: true });
          expect({ ...fast, entries: undefined }).toStrictEqual({ ...whole, entries: undefined });
          expect(whole.entries.slice(whole.entries.length - fast.entries.length)).toStrictEqual(fast.entries);
        };
        await check();
        // More lines as pi writes them (a fresh generated tree continues from the file's end).
        const more = buildSession(after, 3).lines.slice(1).filter((line) => !first.ids.some((id) => line.includes(`"id":"${id}"`)));
        if (more.length === 0 || first.ids.length > 0) {
          await store.append([autoCompactEntry(setting), { type: "message", message: { role: "user", content: "next", timestamp: 1 } }]);
        } else {
          appendFileSync(path, `${more.join("\n")}\n`);
        }
        await check();
        expect((await store.branch({ fromBoundary: true })).autoCompact).toBe(more.length === 0 || first.ids.length > 0 ? setting : (await store.branch()).autoCompact);
      }),
      { numRuns: 150 },
    );
  });
});

describe("openPiFileStore", () => {
  it("fails with COMPACTION_TRANSCRIPT_NOT_FOUND for a missing file", async () => {
    const error = await rejection(openPiFileStore(tmp.file("x.jsonl", "").replace("x.jsonl", "missing.jsonl")));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND });
    expect(String((error as Error).message)).toContain("missing.jsonl");
  });

  it("fails with COMPACTION_TRANSCRIPT_INVALID for a file that is not a session", async () => {
    const error = await rejection(openPiFileStore(tmp.file("not.jsonl", '{"hello":1}\n')));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID });
  });
});
