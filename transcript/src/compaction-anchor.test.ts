import { describe, expect, it } from "vitest";
import { loadBoundary } from "./boundary-load.js";
import { compactionAnchor } from "./compaction-anchor.js";
import { buildContext } from "./context.js";
import type { SessionEntry } from "./types.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const T = "2026-01-01T00:00:05.000Z";
const base = (id: string, parentId: string | null) => ({ id, parentId, timestamp: T });
const user = (id: string, parentId: string | null): SessionEntry => ({ type: "message", ...base(id, parentId), message: { role: "user", content: id, timestamp: 1 } });
const label = (id: string, parentId: string): SessionEntry => ({ type: "label", ...base(id, parentId), targetId: parentId, label: "x" }) as unknown as SessionEntry;
const compaction = (id: string, parentId: string, firstKeptEntryId: string, details?: Record<string, unknown>): SessionEntry => ({
  type: "compaction",
  ...base(id, parentId),
  summary: `summary ${id}`,
  firstKeptEntryId,
  tokensBefore: 9000,
  ...(details === undefined ? {} : { details }),
});

describe("compactionAnchor", () => {
  it("is undefined with no compaction on the branch", () => {
    expect(compactionAnchor(buildContext([user("u1", null), user("u2", "u1")]))).toBeUndefined();
  });

  it("is undefined for a compaction pi wrote (no recorded After)", () => {
    const entries = [user("u1", null), user("u2", "u1"), compaction("c1", "u2", "u2", { readFiles: [], modifiedFiles: [] })];
    expect(compactionAnchor(buildContext(entries))).toBeUndefined();
  });

  it("is undefined for an After that is no number at least 0", () => {
    for (const bad of ["123", -1, null, Number.NaN]) {
      const entries = [user("u1", null), compaction("c1", "u1", "u1", { tokensAfterCompaction: bad })];
      expect(compactionAnchor(buildContext(entries))).toBeUndefined();
    }
  });

  it("covers the summary and the kept messages right after the compaction", () => {
    const entries = [user("u1", null), user("u2", "u1"), user("u3", "u2"), compaction("c1", "u3", "u2", { tokensAfterCompaction: 4321 })];
    const context = buildContext(entries);
    expect(context.entryIds).toEqual(["c1", "u2", "u3"]);
    expect(compactionAnchor(context)).toEqual({ tokens: 4321, lastIndex: 2 });
  });

  it("leaves out the messages appended after the compaction entry, whatever entries without messages sit between", () => {
    const entries = [
      user("u1", null),
      user("u2", "u1"),
      compaction("c1", "u2", "u2", { tokensAfterCompaction: 500 }),
      label("l1", "c1"),
      user("u3", "l1"),
      user("u4", "u3"),
    ];
    const context = buildContext(entries);
    expect(context.entryIds).toEqual(["c1", "u2", "u3", "u4"]);
    expect(compactionAnchor(context)).toEqual({ tokens: 500, lastIndex: 1 });
  });

  it("uses the newest compaction on the branch", () => {
    const entries = [
      user("u1", null),
      compaction("c1", "u1", "u1", { tokensAfterCompaction: 500 }),
      user("u2", "c1"),
      compaction("c2", "u2", "u2"),
      user("u3", "c2"),
    ];
    expect(compactionAnchor(buildContext(entries))).toBeUndefined();
  });

  it("gives the same anchor from loadBoundary's partial branch as from the whole file", () => {
    const entries = [
      user("u1", null),
      user("u2", "u1"),
      user("u3", "u2"),
      compaction("c1", "u3", "u3", { tokensAfterCompaction: 777 }),
      user("u4", "c1"),
    ];
    const file = join(mkdtempSync(join(tmpdir(), "anchor-")), "s.jsonl");
    const header = { type: "session", version: 3, id: "s1", timestamp: T, cwd: "/tmp" };
    writeFileSync(file, [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n");
    const loaded = loadBoundary(file);
    expect(loaded.entryIds).toEqual(["c1", "u3", "u4"]);
    expect(compactionAnchor(loaded)).toEqual({ tokens: 777, lastIndex: 1 });
    expect(compactionAnchor(buildContext(entries))).toEqual({ tokens: 777, lastIndex: 1 });
  });
});
