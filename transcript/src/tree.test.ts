import { describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { TranscriptError } from "./transcript-error.js";
import { SessionTree } from "./tree.js";
import type { SessionEntry } from "./types.js";

const e = (id: string, parentId: string | null, extra: Record<string, unknown> = {}): SessionEntry =>
  ({ type: "label", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", ...extra }) as SessionEntry;

//   r1 - a - b - c
//          \- x - y      (y is last in the file)
//   r2                   (a second root)
const ENTRIES = [e("r1", null), e("a", "r1"), e("b", "a"), e("c", "b"), e("x", "a"), e("r2", null), e("y", "x")];
const tree = new SessionTree(ENTRIES, { file: "t.jsonl" });
const ids = (entries: readonly SessionEntry[]) => entries.map((entry) => entry.id);

describe("SessionTree", () => {
  it("takes the last entry in file order as the leaf", () => {
    expect(tree.leaf?.id).toBe("y");
  });

  it("gives the branch of the leaf from the root", () => {
    expect(ids(tree.branch())).toEqual(["r1", "a", "x", "y"]);
  });

  it("gives the branch of any entry", () => {
    expect(ids(tree.branch("c"))).toEqual(["r1", "a", "b", "c"]);
    expect(ids(tree.branch("r2"))).toEqual(["r2"]);
  });

  it("gives an empty branch for a null leaf and for a session with no entries", () => {
    expect(tree.branch(null)).toEqual([]);
    expect(new SessionTree([]).branch()).toEqual([]);
  });

  it("lists children in file order, and the roots for null", () => {
    expect(ids(tree.children("a"))).toEqual(["b", "x"]);
    expect(ids(tree.children(null))).toEqual(["r1", "r2"]);
    expect(tree.children("c")).toEqual([]);
  });

  it("rejects an unknown leaf id, naming it and suggesting a similar id", () => {
    let error: unknown;
    try {
      tree.branch("cc");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TranscriptError);
    expect((error as TranscriptError).code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect((error as TranscriptError).message).toBe(
      "entry `cc` is not in t.jsonl: expected the id of one of its entries (the last entry is `y`). Did you mean `c`?",
    );
  });

  it("ends the branch at an entry whose parent is not in the file, as pi does", () => {
    expect(ids(new SessionTree([e("a", null), e("b", "gone"), e("c", "b")]).branch())).toEqual(["b", "c"]);
  });

  it("treats an empty parentId as a root, as pi does", () => {
    expect(ids(new SessionTree([e("a", null), e("b", "" as unknown as null)]).branch())).toEqual(["b"]);
  });

  it("resolves a reused id to the later entry, as pi does", () => {
    const t = new SessionTree([e("a", null), e("p", "a", { n: 1 }), e("b", null), e("p", "b", { n: 2 }), e("leaf", "p")]);
    expect(ids(t.branch())).toEqual(["b", "p", "leaf"]);
    expect(t.get("p")).toMatchObject({ n: 2 });
  });

  it("rejects a parent cycle instead of looping", () => {
    const t = new SessionTree([e("a", "b"), e("b", "a")]);
    expect(() => t.branch()).toThrow(/found a cycle through entry `b`/);
  });
});
