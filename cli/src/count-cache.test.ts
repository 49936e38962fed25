/** The token count cache: its file, what it keeps, and what it does with a file it cannot use. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { Readable } from "node:stream";
import { createTiktokenCounter, withCountStore } from "@compaction/core";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cacheDir } from "./cache-dir.js";
import { COUNT_CACHE_MAX_AGE_MS, type CountCache, countCacheFile, countCacheKey, NO_COUNT_CACHE_ENV, openCountCache } from "./count-cache.js";
import type { CliIo } from "./io.js";

let root: string;
let stderr: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "compaction-count-cache-"));
  stderr = "";
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function io(env: Record<string, string> = {}): CliIo {
  return {
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    env: { HOME: join(root, "home"), ...env },
    cwd: root,
  };
}

function session(name = "session.jsonl"): string {
  const path = join(root, name);
  writeFileSync(path, "{}\n");
  return path;
}

const COUNTER = "tiktoken:o200k_base";

/** The cache, which must be on. */
function open(path: string, env: Record<string, string> = {}, limits: { maxEntries?: number } = {}): CountCache {
  const cache = openCountCache(io(env), path, limits);
  expect(cache).toBeDefined();
  return cache as CountCache;
}

describe("openCountCache", () => {
  it("keeps counts in $XDG_CACHE_HOME/compaction/counts/v1, else ~/.cache, one file per session", () => {
    const path = session();
    expect(dirname(countCacheFile(io(), path))).toBe(join(root, "home", ".cache", "compaction", "counts", "v1"));
    expect(dirname(countCacheFile(io({ XDG_CACHE_HOME: join(root, "xdg") }), path))).toBe(join(root, "xdg", "compaction", "counts", "v1"));
    expect(countCacheFile(io(), path)).not.toBe(countCacheFile(io(), session("other.jsonl")));
  });

  it("never puts the cache in the working folder: a relative XDG_CACHE_HOME is ignored, an empty HOME is the user's home", () => {
    expect(cacheDir(io({ XDG_CACHE_HOME: "relative/cache" }))).toBe(join(root, "home", ".cache", "compaction"));
    const emptyHome = cacheDir(io({ HOME: "" }));
    expect(isAbsolute(emptyHome)).toBe(true);
    expect(emptyHome).toBe(join(homedir(), ".cache", "compaction"));
  });

  it("gives the next run the counts this one kept, by counter, and stores no text", () => {
    const path = session();
    const first = open(path);
    expect(first.get(COUNTER, "a secret line")).toBeUndefined();
    first.set(COUNTER, "a secret line", 4);
    first.set("tiktoken:cl100k_base", "a secret line", 5);
    first.save();
    const second = open(path);
    expect(second.get(COUNTER, "a secret line")).toBe(4);
    expect(second.get("tiktoken:cl100k_base", "a secret line")).toBe(5);
    expect(second.get(COUNTER, "another line")).toBeUndefined();
    const file = readFileSync(countCacheFile(io(), path), "utf8");
    expect(file).not.toContain("secret");
    expect(statSync(countCacheFile(io(), path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(file)).toMatchObject({ format: "compaction-token-counts", version: 1, session: path });
    expect(stderr).toBe("");
  });

  it("finds the same file for the same session through a symlink", () => {
    const path = session();
    const link = join(root, "link.jsonl");
    symlinkSync(path, link);
    expect(countCacheFile(io(), link)).toBe(countCacheFile(io(), path));
  });

  it("writes nothing when the run counted nothing new", () => {
    const path = session();
    const cache = open(path);
    cache.get(COUNTER, "x");
    cache.save();
    expect(existsSync(countCacheFile(io(), path))).toBe(false);
  });

  it("reads nothing when the run asks for no count: a file it cannot use is not even noted", () => {
    const path = session();
    const file = countCacheFile(io(), path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "not json");
    open(path).save();
    expect(stderr).toBe("");
    expect(readFileSync(file, "utf8")).toBe("not json");
  });

  it("touches a file it read from, so that a session read every day but not changed keeps its cache", () => {
    const path = session();
    const first = open(path);
    first.set(COUNTER, "text", 1);
    first.save();
    const file = countCacheFile(io(), path);
    const longAgo = (Date.now() - COUNT_CACHE_MAX_AGE_MS + 60_000) / 1000;
    utimesSync(file, longAgo, longAgo);
    const second = open(path);
    expect(second.get(COUNTER, "text")).toBe(1);
    second.save();
    expect(statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
  });

  it(`is off with ${NO_COUNT_CACHE_ENV}=1, on with 0 or empty`, () => {
    expect(openCountCache(io({ [NO_COUNT_CACHE_ENV]: "1" }), session())).toBeUndefined();
    expect(openCountCache(io({ [NO_COUNT_CACHE_ENV]: "true" }), session())).toBeUndefined();
    expect(openCountCache(io({ [NO_COUNT_CACHE_ENV]: "0" }), session())).toBeDefined();
    expect(openCountCache(io({ [NO_COUNT_CACHE_ENV]: "" }), session())).toBeDefined();
  });

  const corrupt: Array<[string, string, RegExp]> = [
    ["a cut-off write", '{"format":"compaction-token-counts","ver', /not valid JSON/],
    ["another format", JSON.stringify({ format: "x", version: 1, counters: {} }), /expected "format": "compaction-token-counts", found "x"/],
    ["a later version", JSON.stringify({ format: "compaction-token-counts", version: 2, counters: {} }), /expected "version": 1, found 2/],
    ["a negative count", JSON.stringify({ format: "compaction-token-counts", version: 1, counters: { [COUNTER]: { [countCacheKey("k")]: -1 } } }), new RegExp(`expected a count of 0 or more at "counters"."tiktoken:o200k_base"."${countCacheKey("k")}", found -1`)],
    ["a count that is text", JSON.stringify({ format: "compaction-token-counts", version: 1, counters: { [COUNTER]: { [countCacheKey("k")]: "7" } } }), /found "7"/],
    ["an array", "[]", /expected a JSON object/],
  ];
  for (const [what, content, reason] of corrupt) {
    it(`ignores a file holding ${what}, says so with its path, and replaces it`, () => {
      const path = session();
      const file = countCacheFile(io(), path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      const cache = open(path);
      expect(cache.get(COUNTER, "k")).toBeUndefined();
      expect(stderr).toContain(`compaction: note: ignored the token count cache ${file}: `);
      expect(stderr).toMatch(reason);
      expect(stderr).toContain("it is rebuilt.");
      cache.set(COUNTER, "text", 2);
      cache.save();
      stderr = "";
      expect(open(path).get(COUNTER, "text")).toBe(2);
      expect(stderr).toBe("");
    });
  }

  it("says once that it cannot write, with the file and how to turn it off, and does not throw", () => {
    const path = session();
    // XDG_CACHE_HOME is a file: no folder can be made in it.
    const xdg = join(root, "not-a-folder");
    writeFileSync(xdg, "");
    const cache = open(path, { XDG_CACHE_HOME: xdg });
    cache.set(COUNTER, "text", 2);
    expect(() => cache.save()).not.toThrow();
    expect(stderr).toContain(`compaction: note: could not write the token count cache ${cache.file}: `);
    expect(stderr).toContain(`hint: set ${NO_COUNT_CACHE_ENV}=1 to stop using the cache.`);
    expect(stderr.match(/note:/g)).toHaveLength(1);
  });

  it("ignores a file it cannot read, saying why", () => {
    const path = session();
    const file = countCacheFile(io(), path);
    // A folder where the file should be: reading it fails whoever runs the test.
    mkdirSync(file, { recursive: true });
    expect(open(path).get(COUNTER, "x")).toBeUndefined();
    expect(stderr).toContain(`ignored the token count cache ${file}: EISDIR`);
  });

  it("past the limit, writes only the counts this run used", () => {
    const path = session();
    const first = open(path);
    for (const text of ["a", "b", "c"]) first.set(COUNTER, text, 1);
    first.save();
    const second = open(path, {}, { maxEntries: 3 });
    expect(second.get(COUNTER, "a")).toBe(1);
    second.set(COUNTER, "d", 1);
    second.save();
    const third = open(path);
    expect(["a", "b", "c", "d"].map((text) => third.get(COUNTER, text))).toEqual([1, undefined, undefined, 1]);
  });

  it("starts a branched session from its parent's counts, and writes its own file with those it used", () => {
    const parent = session("parent.jsonl");
    const first = open(parent);
    for (const text of ["a", "b", "c"]) first.set(COUNTER, text, 1);
    first.save();
    const parentFile = countCacheFile(io(), parent);
    const before = readFileSync(parentFile, "utf8");
    const child = session("child.jsonl");
    let asked = 0;
    const branched = openCountCache(io(), child, { parentSession: () => (asked++, parent) }) as CountCache;
    expect(branched.get(COUNTER, "a")).toBe(1);
    expect(branched.get(COUNTER, "b")).toBe(1);
    branched.set(COUNTER, "d", 2);
    branched.save();
    expect(asked).toBe(1);
    // The parent's file is as it was; the child's holds what the child used and added.
    expect(readFileSync(parentFile, "utf8")).toBe(before);
    const again = openCountCache(io(), child, { parentSession: () => (asked++, parent) }) as CountCache;
    expect(["a", "b", "c", "d"].map((text) => again.get(COUNTER, text))).toEqual([1, 1, undefined, 2]);
    // Its own file now: the parent is not asked for again.
    expect(asked).toBe(1);
    expect(stderr).toBe("");
  });

  it("writes nothing for a branched session that used none of its parent's counts and added none", () => {
    const parent = session("parent.jsonl");
    const first = open(parent);
    first.set(COUNTER, "a", 1);
    first.save();
    const child = session("child.jsonl");
    const branched = openCountCache(io(), child, { parentSession: () => parent }) as CountCache;
    expect(branched.get(COUNTER, "z")).toBeUndefined();
    branched.save();
    expect(existsSync(countCacheFile(io(), child))).toBe(false);
  });

  it("starts a branched session cold, with no note, when its parent's file is unusable or its header cannot be read", () => {
    const parent = session("parent.jsonl");
    const parentFile = countCacheFile(io(), parent);
    mkdirSync(dirname(parentFile), { recursive: true });
    writeFileSync(parentFile, "not json");
    const child = session("child.jsonl");
    expect((openCountCache(io(), child, { parentSession: () => parent }) as CountCache).get(COUNTER, "a")).toBeUndefined();
    expect(readFileSync(parentFile, "utf8")).toBe("not json");
    const unreadable = openCountCache(io(), session("other.jsonl"), {
      parentSession: () => {
        throw new Error("not a pi session header");
      },
    }) as CountCache;
    expect(unreadable.get(COUNTER, "a")).toBeUndefined();
    expect(stderr).toBe("");
  });

  it("removes other sessions' files and cut-off writes untouched for 30 days when it writes", () => {
    const dir = dirname(countCacheFile(io(), session()));
    mkdirSync(dir, { recursive: true });
    const old = join(dir, `${"0".repeat(32)}.json`);
    const oldPartial = join(dir, `${"2".repeat(32)}.json.1234abcd`);
    const recent = join(dir, `${"1".repeat(32)}.json`);
    const notOurs = join(dir, "notes.txt");
    for (const file of [old, oldPartial, recent, notOurs]) writeFileSync(file, "{}");
    const longAgo = (Date.now() - COUNT_CACHE_MAX_AGE_MS - 60_000) / 1000;
    for (const file of [old, oldPartial, notOurs]) utimesSync(file, longAgo, longAgo);
    const cache = open(session());
    cache.set(COUNTER, "text", 1);
    cache.save();
    expect(readdirSync(dir).sort()).toEqual([`${"1".repeat(32)}.json`, "notes.txt", cache.file.slice(dir.length + 1)].sort());
  });
});

describe("counts through the cache", () => {
  it("are tiktoken's, counted and then read back by a later run, for any text (lone surrogates, NUL, emoji, special tokens)", () => {
    const tiktoken = createTiktokenCounter();
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: fc.constantFrom("\uD800", "\uDFFF", "\uFFFD", "\u0000", "😀", "<|endoftext|>", " ", "\n", "a", "é"), maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(text, { maxLength: 12 }), (texts) => {
        rmSync(join(root, "home"), { recursive: true, force: true });
        const path = session();
        const expected = texts.map((t) => tiktoken.count(t));
        for (const run of ["first", "later"]) {
          const cache = open(path);
          const counter = withCountStore(createTiktokenCounter(), cache);
          expect(texts.map((t) => counter.count(t)), run).toEqual(expected);
          counter.dispose();
          cache.save();
        }
      }),
      { numRuns: 150 },
    );
    tiktoken.dispose();
  });
});
