/** The README's error-code table lists every code the core can raise, each once, and nothing else. */
import { readFileSync } from "node:fs";
import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function tableCodes(): string[] {
  const start = README.indexOf("## Error codes");
  const table = README.slice(start, README.indexOf("\n## ", start + 1));
  return [...table.matchAll(/^\| `(COMPACTION_[A-Z_]+)` \|/gm)].map((match) => match[1] as string);
}

describe("the README's error codes", () => {
  it("has one well-formed row per code in ErrorCodes", () => {
    expect([...tableCodes()].sort()).toEqual([...Object.values(ErrorCodes)].sort());
  });

  it("has no rows that are not code rows (a broken row would hide one)", () => {
    const start = README.indexOf("## Error codes");
    const rows = README.slice(start, README.indexOf("\n## ", start + 1)).split("\n").filter((line) => line.startsWith("| `"));
    expect(rows).toHaveLength(tableCodes().length);
  });
});
