/**
 * `loadFixtureAsPi(file, { recordedTimes: true })`: the recording's own clock, which the background
 * compaction benchmark replays on. Claude Code keeps timestamps on its lines; by default the
 * conversion stamps messages one second apart.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLAUDE_FIXTURES, FIXTURES_DIR, loadFixtureAsPi } from "@compaction/fixtures";
import { afterAll, describe, expect, it } from "vitest";

// The recordings are read from a copy, never in place.
const copies = mkdtempSync(join(tmpdir(), "recorded-times-"));
afterAll(() => rmSync(copies, { recursive: true, force: true }));
function copyOf(file: string): string {
  const copy = join(copies, file);
  copyFileSync(join(FIXTURES_DIR, file), copy);
  return copy;
}

const times = (file: string, recordedTimes: boolean): number[] => loadFixtureAsPi(file, { usage: false, recordedTimes }).map((m) => (m as { timestamp: number }).timestamp);

describe("recorded times of the real transcripts", () => {
  it.each(CLAUDE_FIXTURES)("%s: never go back, start at the first line's time and end at or before the last line's", (file) => {
    const recorded = times(file, true);
    for (let i = 1; i < recorded.length; i++) expect(recorded[i]).toBeGreaterThanOrEqual(recorded[i - 1] as number);
    const lines = readFileSync(copyOf(file), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { timestamp?: string; type?: string })
      .filter((line) => (line.type === "user" || line.type === "assistant") && typeof line.timestamp === "string")
      .map((line) => Date.parse(line.timestamp as string));
    expect(recorded[0]).toBeGreaterThanOrEqual(Math.min(...lines));
    expect(recorded.at(-1)).toBeLessThanOrEqual(Math.max(...lines));
    // The recording took longer than a second a message somewhere: the default clock is not the recording's.
    const stamped = times(file, false);
    expect(stamped.at(-1)! - stamped[0]!).toBe((stamped.length - 1) * 1000);
    expect(recorded.at(-1)! - recorded[0]!).not.toBe((recorded.length - 1) * 1000);
  });

  it("leaves the messages themselves as the default conversion makes them", () => {
    const file = CLAUDE_FIXTURES[0] as string;
    const strip = (messages: readonly unknown[]) => messages.map((m) => ({ ...(m as object), timestamp: 0 }));
    expect(strip(loadFixtureAsPi(file, { usage: false, recordedTimes: true }))).toEqual(strip(loadFixtureAsPi(file, { usage: false })));
  });
});
