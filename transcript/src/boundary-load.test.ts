import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { buildSession, sessionOps, sessionText, tmpSessionDir } from "./test-support/pi-sessions.js";
import { type BoundaryLoad, loadBoundary } from "./boundary-load.js";
import { type SessionContext, buildContext } from "./context.js";
import { readSession } from "./parse.js";
import { thrown } from "./test-support/thrown.js";

const tmp = tmpSessionDir();
afterAll(() => tmp.cleanup());
let counter = 0;
const write = (text: string) => tmp.file(`s${++counter}.jsonl`, text);

const REAL = ["pi-large-session.jsonl", "pi-before-compaction.jsonl"].map((name) =>
  fileURLToPath(new URL(`../../../shared/fixtures/real/${name}`, import.meta.url)),
);

/** What both readers must agree on. */
const view = (ctx: SessionContext) => ({
  messages: ctx.messages,
  entryIds: ctx.entryIds,
  compaction: ctx.compaction,
  model: ctx.model,
  thinkingLevel: ctx.thinkingLevel,
  leafId: ctx.leafId,
});

function fullContext(path: string, leafId?: string | null, skipCorrupt = false): SessionContext {
  return buildContext(readSession(path, { skipCorrupt }).entries, { file: path, ...(leafId === undefined ? {} : { leafId }) });
}


const HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const T = "2026-01-01T00:00:01.000Z";
const user = (id: string, parentId: string | null, text: string = id) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: T, message: { role: "user", content: text, timestamp: 1 } });
const compaction = (id: string, parentId: string, firstKeptEntryId: string) =>
  JSON.stringify({ type: "compaction", id, parentId, timestamp: T, summary: `sum ${id}`, firstKeptEntryId, tokensBefore: 9 });

describe("loadBoundary gives the same context as reading the whole file", () => {
  it("on generated sessions with branches and compactions, any leaf and any block size", () => {
    fc.assert(
      fc.property(
        sessionOps,
        fc.integer({ min: 1, max: 300 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        (ops, chunkSize, leafPick, crlf, finalNewline) => {
          const session = buildSession(ops, 3);
          const path = write(sessionText(session.lines, { crlf, finalNewline }));
          const leafId = leafPick === undefined || session.ids.length === 0 ? undefined : session.ids[leafPick % session.ids.length];
          const fast = loadBoundary(path, { chunkSize, ...(leafId === undefined ? {} : { leafId }) });
          expect(view(fast)).toStrictEqual(view(fullContext(path, leafId)));
          expect(fast.fullRead).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("on generated sessions with corrupt lines and a cut-short last line, with skipCorrupt", () => {
    fc.assert(
      fc.property(
        sessionOps,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom("garbage", '{"type":"mess', "[]", '{"id":"no type"}', "{}")), { maxLength: 4 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 200 }),
        (ops, garbage, cutTail, chunkSize) => {
          const lines = buildSession(ops, 3).lines;
          for (const [at, text] of garbage) lines.splice(1 + (at % lines.length), 0, text);
          let content = sessionText(lines);
          if (cutTail && lines.length > 1) content = content.slice(0, content.length - 1 - Math.ceil((lines[lines.length - 1] as string).length / 2));
          const path = write(content);
          const full = fullContext(path, undefined, true);
          const fast = loadBoundary(path, { skipCorrupt: true, chunkSize });
          expect(view(fast)).toStrictEqual(view(full));
          expect(fast.incompleteTail).toBe(readSession(path, { skipCorrupt: true }).incompleteTail);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("on generated version 1 and 2 sessions (read whole and migrated)", () => {
    fc.assert(
      fc.property(sessionOps, fc.constantFrom(1 as const, 2 as const), (ops, version) => {
        const path = write(sessionText(buildSession(ops, version).lines));
        const fast = loadBoundary(path);
        expect(view(fast)).toStrictEqual(view(fullContext(path)));
        expect(fast.fullRead).toBe(true);
        expect(fast.version).toBe(version);
      }),
      { numRuns: 100 },
    );
  });

  it.each(REAL)("on the real fixture %s", (path) => {
    expect(view(loadBoundary(path, { chunkSize: 4096 }))).toStrictEqual(view(fullContext(path)));
  });
});

describe("loadBoundary reads only what it needs", () => {
  it("stops at the first kept entry of the latest compaction and keeps only that part of the branch", () => {
    const filler = "x".repeat(10_000);
    const lines = [HEADER, '{"type":"thinking_level_change","id":"t0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"low"}'];
    let parent = "t0";
    for (let i = 0; i < 100; i++) {
      lines.push(user(`u${i}`, parent, filler));
      parent = `u${i}`;
    }
    lines.push(compaction("c1", parent, "u98"), user("after", "c1"), "");
    const path = write(lines.join("\n"));
    const loaded = loadBoundary(path, { chunkSize: 8192 });
    expect(loaded.entryIds).toEqual(["c1", "u98", "u99", "after"]);
    expect(loaded.branch.map((e) => e.id)).toEqual(["u98", "u99", "c1", "after"]);
    // The thinking level is set only at the start, so the branch is scanned up to it...
    expect(loaded.thinkingLevel).toBe("low");
    expect(loaded.fullRead).toBe(false);
  });

  it("reads a small part of a long file when the settings are found after the boundary", () => {
    const filler = "y".repeat(10_000);
    const lines = [HEADER];
    let parent: string | null = null;
    for (let i = 0; i < 100; i++) {
      lines.push(user(`u${i}`, parent, filler));
      parent = `u${i}`;
    }
    lines.push(compaction("c1", parent as string, "u99"));
    lines.push('{"type":"thinking_level_change","id":"t1","parentId":"c1","timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high"}');
    lines.push('{"type":"model_change","id":"m1","parentId":"t1","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"m"}', "");
    const path = write(lines.join("\n"));
    const loaded = loadBoundary(path, { chunkSize: 4096 });
    expect(loaded.bytesRead).toBeLessThan(statSync(path).size / 10);
    expect(loaded.model).toEqual({ provider: "p", modelId: "m" });
    expect(view(loaded)).toStrictEqual(view(fullContext(path)));
  });

  it("reads a huge single line", () => {
    const huge = "z€".repeat(3_000_000);
    const path = write([HEADER, user("u1", null), user("u2", "u1", huge), compaction("c1", "u2", "u2"), user("u3", "c1"), ""].join("\n"));
    const loaded = loadBoundary(path, { chunkSize: 65_536 });
    expect(loaded.entryIds).toEqual(["c1", "u2", "u3"]);
    expect(loaded.messages[1]).toMatchObject({ content: huge });
  });

  it("reads the header in small steps, not a whole block", () => {
    const lines = [HEADER];
    let parent: string | null = null;
    for (let i = 0; i < 100; i++) {
      lines.push(user(`u${i}`, parent, "w".repeat(10_000)));
      parent = `u${i}`;
    }
    lines.push(compaction("c1", parent as string, "u99"));
    lines.push('{"type":"thinking_level_change","id":"t1","parentId":"c1","timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high"}');
    lines.push('{"type":"model_change","id":"m1","parentId":"t1","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"m"}', "");
    const loaded = loadBoundary(write(lines.join("\n")), { chunkSize: 65_536 });
    // One 64 KiB block from the end holds the boundary; the header costs at most the first 4 KiB read.
    expect(loaded.bytesRead).toBeLessThanOrEqual(65_536 + 4096);
    expect(loaded.entryIds).toEqual(["c1", "u99"]);
  });

  it("reads a header longer than several read steps, after blank lines, with characters the steps cut", () => {
    const cwd = `/p/${"é日🎉".repeat(3000)}`;
    const header = JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: T, cwd });
    const path = write(["", "  ", header, user("u1", null), compaction("c1", "u1", "u1"), user("u2", "c1"), ""].join("\n"));
    const loaded = loadBoundary(path, { chunkSize: 4096 });
    expect(loaded.header.cwd).toBe(cwd);
    expect(view(loaded)).toStrictEqual(view(fullContext(path)));
  });

  it("decodes characters cut by block boundaries for every small block size", () => {
    const text = "héllo 日本語 🎉👩‍💻 ünïcödé";
    const path = write([HEADER, user("u1", null, text), user("u2", "u1", text + text), ""].join("\n"));
    for (let chunkSize = 1; chunkSize <= 16; chunkSize++) {
      const loaded = loadBoundary(path, { chunkSize });
      expect(loaded.messages.map((m) => ("content" in m ? m.content : ""))).toEqual([text, text + text]);
    }
  });
});

describe("loadBoundary on damaged files", () => {
  it("reports a corrupt line it reads with the file, the line number and what was found", () => {
    const path = write([HEADER, user("u1", null), "", user("u2", "u1"), '{"type":"message","id":"u3","parentId":"u2","oops', user("u4", "u3"), ""].join("\n"));
    const error = thrown(() => loadBoundary(path, { chunkSize: 7 }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_CORRUPT);
    expect(error.line).toBe(5);
    expect(error.message).toContain(`${path}:5: expected a JSON object per line, found \`{"type":"message","id":"u3"`);
  });

  it("skips corrupt lines with skipCorrupt and reports each with its line number", () => {
    const path = write([HEADER, user("u1", null), "garbage one", user("u2", "u1"), "", "garbage two", user("u3", "u2"), ""].join("\n"));
    const loaded = loadBoundary(path, { skipCorrupt: true, chunkSize: 5 });
    expect(loaded.entryIds).toEqual(["u1", "u2", "u3"]);
    expect(loaded.skipped.map((s) => [s.line, s.text])).toEqual([
      [3, "garbage one"],
      [6, "garbage two"],
    ]);
    expect(view(loaded)).toStrictEqual(view(fullContext(path, undefined, true)));
  });

  it("loads a file whose last line was cut short and reports the incomplete tail", () => {
    const path = write([HEADER, user("u1", null), user("u2", "u1"), '{"type":"message","id":"u3","parentId":"u2","timestamp":"2026'].join("\n"));
    const loaded = loadBoundary(path);
    expect(loaded.entryIds).toEqual(["u1", "u2"]);
    expect(loaded.incompleteTail).toBe(true);
    expect(loaded.skipped).toEqual([expect.objectContaining({ line: 4 })]);
  });

  it("reads CRLF files", () => {
    const path = write([HEADER, user("u1", null), compaction("c1", "u1", "u1"), user("u2", "c1"), ""].join("\r\n"));
    expect(loadBoundary(path, { chunkSize: 3 }).entryIds).toEqual(["c1", "u1", "u2"]);
  });

  it("rejects an unknown leaf id", () => {
    const path = write([HEADER, user("u1", null), user("u2", "u1"), ""].join("\n"));
    const error = thrown(() => loadBoundary(path, { leafId: "u9" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain("entry `u9` is not in");
    expect(error.message).toContain("the last entry is `u2`");
  });

  it("rejects an empty file and a file without a session header", () => {
    expect(thrown(() => loadBoundary(write(""))).message).toMatch(/is not a session file/);
    expect(thrown(() => loadBoundary(write(`${user("u1", null)}\n`))).code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
  });

  it("gives an empty context for a file with only a header", () => {
    const loaded: BoundaryLoad = loadBoundary(write(`${HEADER}\n`));
    expect(loaded.messages).toEqual([]);
    expect(loaded.header.id).toBe("s1");
  });

  it("falls back to reading the whole file when a parent comes after its child", () => {
    const path = write([HEADER, user("child", "parent"), user("parent", null), user("leaf", "child"), ""].join("\n"));
    const loaded = loadBoundary(path);
    expect(loaded.fullRead).toBe(true);
    expect(loaded.entryIds).toEqual(["parent", "child", "leaf"]);
  });

  it("falls back to reading the whole file when a branch id is reused by a later line", () => {
    // pi's byId takes the later "p" (parent of nothing on this branch but named by u2).
    const path = write([HEADER, user("p", null, "first p"), user("u2", "p"), user("p", null, "second p"), user("u3", "u2"), ""].join("\n"));
    const loaded = loadBoundary(path, { leafId: "u3" });
    expect(loaded.fullRead).toBe(true);
    expect(view(loaded)).toStrictEqual(view(fullContext(path, "u3")));
  });

  it("falls back to reading the whole file when a parent before the boundary is never found", () => {
    const path = write(
      [
        HEADER,
        '{"type":"model_change","id":"m","parentId":"later","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"x"}',
        user("later", null),
        user("u1", "m"),
        compaction("c1", "u1", "u1"),
        user("u2", "c1"),
        "",
      ].join("\n"),
    );
    const loaded = loadBoundary(path);
    expect(loaded.fullRead).toBe(true);
    expect(view(loaded)).toStrictEqual(view(fullContext(path)));
  });

  it("reads older versions whole and migrates them", () => {
    const loaded = loadBoundary(REAL[1] as string);
    expect(loaded.fullRead).toBe(true);
    expect(loaded.version).toBe(1);
    expect(loaded.compaction?.id).toBe("l00000629");
  });
});
