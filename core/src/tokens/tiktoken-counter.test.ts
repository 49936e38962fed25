import { createRequire } from "node:module";
import { describe, it, expect, afterAll, afterEach, vi } from "vitest";
import { get_encoding } from "tiktoken";
import { ErrorCodes } from "../errors.js";
import type { TokenCounter } from "./token-counter.js";
import { createTiktokenCounter, RETIRED_ENCODER_MS, tiktokenEncoderStats, tiktokenEncodingNames } from "./tiktoken-counter.js";

const live: TokenCounter[] = [];
function counter(encoding?: string): TokenCounter {
  const created = createTiktokenCounter(encoding === undefined ? {} : { encoding });
  live.push(created);
  return created;
}

/** tiktoken used directly, not through our counter: the reference figures. */
const direct = { o200k_base: get_encoding("o200k_base"), cl100k_base: get_encoding("cl100k_base"), r50k_base: get_encoding("r50k_base") };
afterAll(() => Object.values(direct).forEach((encoder) => encoder.free()));

function directCount(encoding: keyof typeof direct, text: string): number {
  return direct[encoding].encode_ordinary(text).length;
}

function countersHolding(encoding: string): number {
  return tiktokenEncoderStats().find((stat) => stat.encoding === encoding)?.counters ?? 0;
}

afterEach(() => {
  for (const created of live.splice(0)) created.dispose();
});

describe("createTiktokenCounter", () => {
  it("defaults to o200k_base and names itself tiktoken:o200k_base", () => {
    expect(counter().name).toBe("tiktoken:o200k_base");
  });

  it("counts 'hello world' as tiktoken's o200k_base encode_ordinary does (2 tokens)", () => {
    const expected = directCount("o200k_base", "hello world");
    expect(expected).toBe(2);
    expect(counter().count("hello world")).toBe(expected);
  });

  it("counts a mixed code and prose string exactly as tiktoken does", () => {
    const text = "function add(a: number, b: number) {\n  return a + b; // sum ✓\n}\nThe résumé says 42.";
    expect(counter().count(text)).toBe(directCount("o200k_base", text));
  });

  it("counts the empty string as 0 tokens", () => {
    expect(counter().count("")).toBe(0);
  });

  it("counts special-token text such as <|endoftext|> as plain text instead of throwing", () => {
    const text = "before <|endoftext|> after <|fim_prefix|>";
    expect(counter().count(text)).toBe(directCount("o200k_base", text));
    expect(counter().count("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("selects cl100k_base by name and counts with it", () => {
    const cl100k = counter("cl100k_base");
    const text = "Tokenizers differ: 東京タワー and emoji 🙂 count differently.";
    expect(cl100k.name).toBe("tiktoken:cl100k_base");
    expect(cl100k.count(text)).toBe(directCount("cl100k_base", text));
    expect(directCount("cl100k_base", text)).not.toBe(directCount("o200k_base", text));
  });

  it("rejects an unknown encoding with ENCODING_UNKNOWN, listing the valid names", () => {
    let thrown: unknown;
    try {
      createTiktokenCounter({ encoding: "o200k" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: ErrorCodes.ENCODING_UNKNOWN });
    const message = (thrown as Error).message;
    for (const name of tiktokenEncodingNames()) expect(message).toContain(name);
    expect(message).toContain('Did you mean "o200k_base"');
  });

  it("reads the valid encoding names from tiktoken's registry", () => {
    expect(tiktokenEncodingNames()).toEqual(expect.arrayContaining(["o200k_base", "cl100k_base", "p50k_base", "r50k_base", "gpt2"]));
  });

  it("throws a CompactionError saying the counter was disposed when counting after dispose", () => {
    const disposed = createTiktokenCounter();
    disposed.dispose();
    expect(() => disposed.count("hello")).toThrowError(/used after dispose\(\)/);
    expect(() => disposed.count("hello")).toThrowError(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
  });
});

describe("shared encoders", () => {
  it("starts no encoder until a counter counts a non-empty text", () => {
    const idle = createTiktokenCounter({ encoding: "p50k_base" });
    try {
      expect(countersHolding("p50k_base")).toBe(0);
      expect(idle.count("")).toBe(0);
      expect(countersHolding("p50k_base")).toBe(0);
      expect(idle.count("hello world")).toBe(2);
      expect(countersHolding("p50k_base")).toBe(1);
    } finally {
      idle.dispose();
    }
    expect(countersHolding("p50k_base")).toBe(0);
  });

  it("shares one encoder between two counters of the same encoding", () => {
    const first = createTiktokenCounter({ encoding: "p50k_base" });
    const second = createTiktokenCounter({ encoding: "p50k_base" });
    first.count("a");
    second.count("b");
    try {
      expect(tiktokenEncoderStats().filter((stat) => stat.encoding === "p50k_base")).toEqual([
        { encoding: "p50k_base", counters: 2 },
      ]);
    } finally {
      first.dispose();
      second.dispose();
    }
  });

  it("keeps the encoder while one counter still uses it and frees it after both are disposed", () => {
    const first = createTiktokenCounter({ encoding: "r50k_base" });
    const second = createTiktokenCounter({ encoding: "r50k_base" });
    first.count("a");
    second.count("b");
    first.dispose();
    expect(countersHolding("r50k_base")).toBe(1);
    expect(second.count("still works")).toBe(2);
    second.dispose();
    expect(countersHolding("r50k_base")).toBe(0);
    expect(tiktokenEncoderStats().some((stat) => stat.encoding === "r50k_base")).toBe(false);
  });

  it("does not release the shared encoder twice when one counter is disposed twice", () => {
    const first = createTiktokenCounter({ encoding: "gpt2" });
    const second = createTiktokenCounter({ encoding: "gpt2" });
    first.count("a");
    second.count("b");
    first.dispose();
    first.dispose();
    expect(countersHolding("gpt2")).toBe(1);
    expect(second.count("hello world")).toBe(2);
    second.dispose();
  });

  it("hands a just-released encoder to a counter made before it is freed, and frees it RETIRED_ENCODER_MS later otherwise", async () => {
    const tiktoken = createRequire(import.meta.url)("tiktoken") as typeof import("tiktoken");
    const loads = vi.spyOn(tiktoken, "get_encoding");
    try {
      await new Promise((done) => setTimeout(done, RETIRED_ENCODER_MS + 50)); // what earlier tests released is freed
      const first = createTiktokenCounter({ encoding: "p50k_edit" });
      expect(first.count("hello world")).toBe(2);
      first.dispose();
      const next = createTiktokenCounter({ encoding: "p50k_edit" });
      expect(next.count("hello world")).toBe(2);
      expect(countersHolding("p50k_edit")).toBe(1);
      next.dispose();
      expect(loads.mock.calls.filter(([name]) => name === "p50k_edit")).toHaveLength(1);
      await new Promise((done) => setTimeout(done, RETIRED_ENCODER_MS + 50));
      const later = createTiktokenCounter({ encoding: "p50k_edit" });
      expect(later.count("hello world")).toBe(2);
      later.dispose();
      expect(loads.mock.calls.filter(([name]) => name === "p50k_edit")).toHaveLength(2); // the old one was freed
    } finally {
      loads.mockRestore();
    }
  });

  it("with an image store, builds the encoder once and stores its image, which later counters start from", async () => {
    const tiktoken = createRequire(import.meta.url)("tiktoken") as typeof import("tiktoken");
    const loads = vi.spyOn(tiktoken, "get_encoding");
    const images = new Map<string, Uint8Array>();
    const notes: string[] = [];
    const image = { read: (key: string) => images.get(key), write: (key: string, data: Uint8Array) => void images.set(key, data), onNote: (message: string) => void notes.push(message) };
    const text = "counted by an encoder started from its image";
    try {
      const first = createTiktokenCounter({ encoding: "r50k_base", image });
      expect(first.count(text)).toBe(directCount("r50k_base", text));
      first.dispose();
      expect([...images.keys()]).toEqual([expect.stringMatching(/^r50k_base-tiktoken-/)]);
      await new Promise((done) => setTimeout(done, RETIRED_ENCODER_MS + 50)); // the built one is freed
      const read = vi.spyOn(image, "read");
      const later = createTiktokenCounter({ encoding: "r50k_base", image });
      expect(later.count(text)).toBe(directCount("r50k_base", text));
      later.dispose();
      expect(read).toHaveBeenCalledTimes(1);
      expect(images.size).toBe(1);
      expect(loads.mock.calls.filter(([name]) => name === "r50k_base")).toHaveLength(0);
      expect(notes).toEqual([]);
    } finally {
      loads.mockRestore();
    }
  });

  it("loads a fresh encoder for a counter created after the last one was freed", () => {
    const first = createTiktokenCounter({ encoding: "gpt2" });
    first.dispose();
    const again = createTiktokenCounter({ encoding: "gpt2" });
    try {
      expect(again.count("hello world")).toBe(2);
      expect(countersHolding("gpt2")).toBe(1);
    } finally {
      again.dispose();
    }
  });
});
