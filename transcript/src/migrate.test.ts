import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { migrateEntries, v1EntryId } from "./migrate.js";
import { parseSession, readSession } from "./parse.js";
import type { RawSessionEntry, SessionHeader } from "./types.js";

const V1: SessionHeader = { type: "session", id: "s", timestamp: "2026-01-01T00:00:00.000Z" };
const V2: SessionHeader = { ...V1, version: 2 };
const V3: SessionHeader = { ...V1, version: 3 };
const msg = (text: string, role = "user"): RawSessionEntry => ({ type: "message", timestamp: "2026-01-01T00:00:01.000Z", message: { role, content: text, timestamp: 1 } });

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe("v1EntryId", () => {
  it("names an entry by its line number, zero-padded to 8 digits", () => {
    expect(v1EntryId(42)).toBe("l00000042");
    expect(v1EntryId(123_456_789)).toBe("l123456789");
  });
});

describe("migrateEntries", () => {
  it("gives version 1 entries ids from their line numbers and a linear parent chain", () => {
    const out = migrateEntries(V1, [msg("a"), msg("b"), msg("c")], [2, 4, 5]);
    expect(out.map((e) => [e.id, e.parentId])).toEqual([
      ["l00000002", null],
      ["l00000004", "l00000002"],
      ["l00000005", "l00000004"],
    ]);
  });

  it("assumes the header on line 1 and no blank lines when no line numbers are given", () => {
    expect(migrateEntries(V1, [msg("a"), msg("b")]).map((e) => e.id)).toEqual(["l00000002", "l00000003"]);
  });

  it("turns firstKeptEntryIndex (header = 0, counting entries) into firstKeptEntryId", () => {
    const compaction: RawSessionEntry = { type: "compaction", timestamp: "2026-01-01T00:00:02.000Z", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 5 };
    // Entry 2 is the second entry, on line 5 because of blank lines.
    const out = migrateEntries(V1, [msg("a"), msg("b"), compaction], [3, 5, 6]);
    expect(out[2]).toEqual({ type: "compaction", timestamp: "2026-01-01T00:00:02.000Z", summary: "s", tokensBefore: 5, id: "l00000006", parentId: "l00000005", firstKeptEntryId: "l00000005" });
  });

  it("resolves a firstKeptEntryIndex that names the header or no entry to no firstKeptEntryId, as pi does", () => {
    for (const index of [0, 9, -1, 1.5]) {
      const compaction: RawSessionEntry = { type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: index, tokensBefore: 5 };
      const out = migrateEntries(V1, [msg("a"), compaction]);
      expect(out[1]).not.toHaveProperty("firstKeptEntryId");
      expect(out[1]).not.toHaveProperty("firstKeptEntryIndex");
    }
  });

  it("does not change the entries it is given", () => {
    const compaction: RawSessionEntry = { type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 1, tokensBefore: 5 };
    const input = deepFreeze([msg("a", "hookMessage"), compaction]);
    const snapshot = structuredClone(input);
    expect(() => migrateEntries(V1, input)).not.toThrow();
    expect(input).toEqual(snapshot);
  });

  it("renames the hookMessage role to custom in version 2 entries, in new objects", () => {
    const hook = { ...msg("x", "hookMessage"), id: "h1", parentId: null };
    const plain = { ...msg("y"), id: "p1", parentId: "h1" };
    const out = migrateEntries(V2, deepFreeze([hook, plain]));
    expect(out[0]?.type === "message" && out[0].message.role).toBe("custom");
    expect(hook).toMatchObject({ message: { role: "hookMessage" } });
    expect(out[1]).toBe(plain);
  });

  it("renames hookMessage in version 1 files too", () => {
    const out = migrateEntries(V1, [msg("x", "hookMessage")]);
    expect(out[0]?.type === "message" && out[0].message.role).toBe("custom");
  });

  it("returns version 3 entries unchanged", () => {
    const entries = [{ ...msg("x", "hookMessage"), id: "a", parentId: null }];
    expect(migrateEntries(V3, entries)).toBe(entries);
  });

  it("gives the same ids when a version 1 file is read twice", () => {
    const path = fileURLToPath(new URL("../../../shared/fixtures/real/pi-before-compaction.jsonl", import.meta.url));
    const first = readSession(path);
    const second = readSession(path);
    expect(first.version).toBe(1);
    expect(second.entries.map((e) => e.id)).toEqual(first.entries.map((e) => e.id));
    expect(first.entries[0]?.id).toBe("l00000002");
  });

  it("names version 1 entries by line even after skipped lines, matching pi's entry-index meaning", () => {
    const header = JSON.stringify(V1);
    const compaction = JSON.stringify({ type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 });
    const parsed = parseSession([header, JSON.stringify(msg("a")), "garbage", JSON.stringify(msg("b")), compaction, ""].join("\n"), { skipCorrupt: true });
    // pi drops the garbage line too, so index 2 is the second parsed entry ("b", on line 4).
    expect(parsed.entries.map((e) => e.id)).toEqual(["l00000002", "l00000004", "l00000005"]);
    expect(parsed.entries[2]).toMatchObject({ firstKeptEntryId: "l00000004", parentId: "l00000004" });
  });
});
