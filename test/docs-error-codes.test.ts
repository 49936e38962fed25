/** The error-code table (docs/error-codes.md, linked from the README) lists every code the core can raise, each once, and nothing else. */
import { readFileSync } from "node:fs";
import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";

const PAGE = readFileSync(new URL("../docs/error-codes.md", import.meta.url), "utf8");

function tableCodes(): string[] {
  return [...PAGE.matchAll(/^\| `(COMPACTION_[A-Z_]+)` \|/gm)].map((match) => match[1] as string);
}

describe("docs/error-codes.md", () => {
  it("has one well-formed row per code in ErrorCodes", () => {
    expect([...tableCodes()].sort()).toEqual([...Object.values(ErrorCodes)].sort());
  });

  it("has no rows that are not code rows (a broken row would hide one)", () => {
    const rows = PAGE.split("\n").filter((line) => line.startsWith("| `"));
    expect(rows).toHaveLength(tableCodes().length);
  });
});
