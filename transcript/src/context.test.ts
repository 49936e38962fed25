import { describe, expect, it } from "vitest";
import { buildContext } from "./context.js";
import type { SessionEntry } from "./types.js";

const T = "2026-01-01T00:00:05.000Z";
const MS = Date.parse(T);
const base = (id: string, parentId: string | null) => ({ id, parentId, timestamp: T });
const user = (id: string, parentId: string | null): SessionEntry => ({ type: "message", ...base(id, parentId), message: { role: "user", content: id, timestamp: 1 } });
const assistant = (id: string, parentId: string | null, model = "m1"): SessionEntry => ({
  type: "message",
  ...base(id, parentId),
  message: { role: "assistant", content: [{ type: "text", text: id }], provider: "p", model, timestamp: 1 },
});
const compaction = (id: string, parentId: string, firstKeptEntryId: string): SessionEntry => ({
  type: "compaction",
  ...base(id, parentId),
  summary: `summary ${id}`,
  firstKeptEntryId,
  tokensBefore: 123,
});
const texts = (ctx: ReturnType<typeof buildContext>) =>
  ctx.messages.map((m) => {
    if (m.role === "compactionSummary" || m.role === "branchSummary") return m.summary;
    return "content" in m && typeof m.content === "string" ? m.content : m.role;
  });

describe("buildContext", () => {
  it("gives every message of the branch when there is no compaction, with the entry each came from", () => {
    const ctx = buildContext([user("u1", null), assistant("a1", "u1"), user("u2", "a1")]);
    expect(ctx.entryIds).toEqual(["u1", "a1", "u2"]);
    expect(ctx.messages).toHaveLength(3);
    expect(ctx.compaction).toBeNull();
    expect(ctx.leafId).toBe("u2");
  });

  it("puts the latest compaction's summary first, then the kept entries, then what follows", () => {
    const entries = [user("u1", null), user("u2", "u1"), user("u3", "u2"), compaction("c1", "u3", "u2"), user("u4", "c1")];
    const ctx = buildContext(entries);
    expect(ctx.messages[0]).toEqual({ role: "compactionSummary", summary: "summary c1", tokensBefore: 123, timestamp: MS });
    expect(ctx.entryIds).toEqual(["c1", "u2", "u3", "u4"]);
    expect(ctx.compaction?.id).toBe("c1");
  });

  it("uses only the latest of several compactions on the branch", () => {
    const entries = [
      user("u1", null),
      compaction("c1", "u1", "u1"),
      user("u2", "c1"),
      user("u3", "u2"),
      compaction("c2", "u3", "u3"),
      user("u4", "c2"),
    ];
    expect(texts(buildContext(entries))).toEqual(["summary c2", "u3", "u4"]);
  });

  it("keeps an earlier compaction's range out of the messages even when the kept part spans it", () => {
    const entries = [user("u1", null), compaction("c1", "u1", "u1"), user("u2", "c1"), compaction("c2", "u2", "u1"), user("u3", "c2")];
    // c2 keeps from u1: u1, (c1 has no message), u2.
    expect(texts(buildContext(entries))).toEqual(["summary c2", "u1", "u2", "u3"]);
  });

  it("keeps nothing before the compaction when firstKeptEntryId is not on the branch", () => {
    const entries = [user("u1", null), user("side", "u1"), user("u2", "u1"), compaction("c1", "u2", "side"), user("u3", "c1")];
    expect(texts(buildContext(entries))).toEqual(["summary c1", "u3"]);
  });

  it("ignores a compaction that is on another branch", () => {
    const entries = [user("u1", null), compaction("c1", "u1", "u1"), user("u2", "u1")];
    expect(buildContext(entries).compaction).toBeNull();
    expect(texts(buildContext(entries))).toEqual(["u1", "u2"]);
  });

  it("turns custom_message and branch_summary entries into messages and drops empty branch summaries", () => {
    const entries: SessionEntry[] = [
      user("u1", null),
      { type: "custom_message", ...base("cm", "u1"), customType: "ext", content: "hi", display: true },
      { type: "branch_summary", ...base("bs", "cm"), summary: "went elsewhere", fromId: "u1" },
      { type: "branch_summary", ...base("bs0", "bs"), summary: "", fromId: "u1" },
      { type: "custom", ...base("cu", "bs0") },
    ];
    const ctx = buildContext(entries);
    expect(ctx.messages.slice(1)).toEqual([
      { role: "custom", customType: "ext", content: "hi", display: true, details: undefined, timestamp: MS },
      { role: "branchSummary", summary: "went elsewhere", fromId: "u1", timestamp: MS },
    ]);
    expect(ctx.entryIds).toEqual(["u1", "cm", "bs"]);
  });

  it("takes the model and thinking level from the latest entries on the whole branch, also before the compaction", () => {
    const entries: SessionEntry[] = [
      { type: "thinking_level_change", ...base("t1", null), thinkingLevel: "high" },
      { type: "model_change", ...base("m1", "t1"), provider: "x", modelId: "first" },
      assistant("a1", "m1", "second"),
      compaction("c1", "a1", "a1"),
      user("u1", "c1"),
    ];
    const ctx = buildContext(entries);
    expect(ctx.model).toEqual({ provider: "p", modelId: "second" });
    expect(ctx.thinkingLevel).toBe("high");
  });

  it("defaults to no model and thinking level off", () => {
    const ctx = buildContext([user("u1", null)]);
    expect(ctx.model).toBeNull();
    expect(ctx.thinkingLevel).toBe("off");
  });

  it("builds the branch of the leaf it is given", () => {
    const entries = [user("u1", null), user("left", "u1"), user("right", "u1")];
    expect(texts(buildContext(entries, { leafId: "left" }))).toEqual(["u1", "left"]);
  });

  it("gives an empty context for a null leaf", () => {
    const ctx = buildContext([user("u1", null)], { leafId: null });
    expect(ctx.messages).toEqual([]);
    expect(ctx.leafId).toBeNull();
  });

  it("returns the whole branch it used", () => {
    const entries = [user("u1", null), user("x", "u1"), user("u2", "u1")];
    expect(buildContext(entries).branch.map((e) => e.id)).toEqual(["u1", "u2"]);
  });
});
