import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { withCountStore, type TokenCountStore } from "./count-store.js";
import { createTiktokenCounter } from "./tiktoken-counter.js";
import type { TokenCounter } from "./token-counter.js";

/** A store in a Map, recording its calls. */
function mapStore(initial: Record<string, number> = {}): TokenCountStore & { readonly entries: Map<string, number>; readonly calls: string[] } {
  const entries = new Map(Object.entries(initial));
  const calls: string[] = [];
  return {
    entries,
    calls,
    get(counter, text) {
      calls.push(`get ${counter} ${text}`);
      return entries.get(`${counter}|${text}`);
    },
    set(counter, text, count) {
      calls.push(`set ${counter} ${text} ${count}`);
      entries.set(`${counter}|${text}`, count);
    },
  };
}

/** A counter of words, recording what it counted. */
function wordCounter(): TokenCounter & { readonly counted: string[] } {
  const counted: string[] = [];
  let disposed = false;
  return {
    name: "words",
    additiveAtLineStarts: true,
    counted,
    count(text) {
      if (disposed) throw new Error("disposed");
      counted.push(text);
      return text.split(/\s+/).filter(Boolean).length;
    },
    dispose() {
      disposed = true;
    },
  };
}

describe("withCountStore", () => {
  it("keeps the counter's name and line additivity", () => {
    const counter = withCountStore(wordCounter(), mapStore());
    expect(counter.name).toBe("words");
    expect(counter.additiveAtLineStarts).toBe(true);
    const { additiveAtLineStarts: _, ...plain } = wordCounter();
    expect(withCountStore(plain, mapStore()).additiveAtLineStarts).toBeUndefined();
  });

  it("counts a text it does not hold and keeps the count under the counter's name", () => {
    const inner = wordCounter();
    const store = mapStore();
    expect(withCountStore(inner, store).count("three short words")).toBe(3);
    expect(inner.counted).toEqual(["three short words"]);
    expect(store.entries.get("words|three short words")).toBe(3);
  });

  it("answers from the store without counting, even a count the counter would not give", () => {
    const inner = wordCounter();
    const counter = withCountStore(inner, mapStore({ "words|kept text": 41 }));
    expect(counter.count("kept text")).toBe(41);
    expect(inner.counted).toEqual([]);
  });

  it("does not read another counter's counts", () => {
    const inner = wordCounter();
    expect(withCountStore(inner, mapStore({ "other|two words": 9 })).count("two words")).toBe(2);
    expect(inner.counted).toEqual(["two words"]);
  });

  it("counts the empty text as the counter does, without the store", () => {
    const store = mapStore();
    expect(withCountStore(wordCounter(), store).count("")).toBe(0);
    expect(store.calls).toEqual([]);
  });

  it("disposes the counter, and throws after dispose as the counter does, even for a kept text", () => {
    const tiktoken = createTiktokenCounter();
    const counter = withCountStore(tiktoken, mapStore({ [`${tiktoken.name}|kept`]: 1 }));
    expect(counter.count("kept")).toBe(1);
    counter.dispose();
    expect(() => tiktoken.count("x")).toThrowError(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
    expect(() => counter.count("kept")).toThrowError(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
  });

  it("disposes the counter once, however often it is disposed", () => {
    let disposals = 0;
    const counter = withCountStore({ ...wordCounter(), dispose: () => void (disposals += 1) }, mapStore());
    counter.dispose();
    counter.dispose();
    expect(disposals).toBe(1);
  });

  it("gives tiktoken's counts on real text, first counted and then kept", () => {
    const tiktoken = createTiktokenCounter();
    const store = mapStore();
    const counter = withCountStore(tiktoken, store);
    const texts = ["Hello, world!", "const x = await fetch(url);\n", "<|endoftext|> is plain text here", "日本語のテキスト"];
    const first = texts.map((text) => counter.count(text));
    const again = texts.map((text) => counter.count(text));
    expect(first).toEqual(texts.map((text) => tiktoken.count(text)));
    expect(again).toEqual(first);
    expect(store.calls.filter((call) => call.startsWith("set"))).toHaveLength(texts.length);
    counter.dispose();
  });
});
