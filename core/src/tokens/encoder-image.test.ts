import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import type { Tiktoken } from "tiktoken";
import { beforeEach, describe, expect, it } from "vitest";
import { ENCODER_IMAGE_FORMAT, type EncoderImageStore, imageChecksum, startEncoderWithImage } from "./encoder-image.js";

const require = createRequire(import.meta.url);
const tiktoken = require("tiktoken") as typeof import("tiktoken");
/** tiktoken's encoder built the usual way, the reference for every count here. */
const reference = tiktoken.get_encoding("o200k_base");
const count = (encoder: Tiktoken, text: string): number => encoder.encode_ordinary(text).length;
const REAL_FIXTURES = fileURLToPath(new URL("../../../../shared/fixtures/real/", import.meta.url));

/** A store in a Map, with the notes it was told. */
function memoryStore(): EncoderImageStore & { readonly images: Map<string, Uint8Array>; readonly notes: string[] } {
  const images = new Map<string, Uint8Array>();
  const notes: string[] = [];
  return {
    images,
    notes,
    read: (key) => images.get(key),
    write: (key, image) => void images.set(key, Uint8Array.from(image)),
    where: (key) => `memory:${key}`,
    onNote: (message) => void notes.push(message),
  };
}

let store: ReturnType<typeof memoryStore>;
const start = (encoding = "o200k_base") => startEncoderWithImage(encoding, store);
/** The one image in the store: its key and bytes. */
const theImage = (): [string, Buffer] => {
  expect(store.images.size).toBe(1);
  const [key, image] = [...store.images][0] as [string, Uint8Array];
  return [key, Buffer.from(image)];
};
/** The image's header line, parsed, and the byte offset its memory starts at. */
const headerOf = (data: Buffer): { header: Record<string, unknown>; memoryAt: number } => {
  const end = data.indexOf(0x0a);
  return { header: JSON.parse(data.subarray(0, end).toString("utf8")) as Record<string, unknown>, memoryAt: end + 1 };
};
/** The image with its header changed; `signed`: its checksum made to match again, as a forger would. */
const withHeader = (data: Buffer, change: (header: Record<string, unknown>) => void, { signed = true } = {}): Buffer => {
  const { header, memoryAt } = headerOf(data);
  change(header);
  const memory = data.subarray(memoryAt);
  if (signed) {
    const { crc32: _, ...fields } = header;
    header["crc32"] = imageChecksum(fields as Parameters<typeof imageChecksum>[0], memory);
  }
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), memory]);
};

beforeEach(() => {
  store = memoryStore();
});

describe("startEncoderWithImage", () => {
  it("builds the encoder and stores its image first, then starts from the image", () => {
    const built = start();
    expect(built.source).toBe("built");
    const [key, image] = theImage();
    expect(key).toMatch(/^o200k_base-tiktoken-\d+\.\d+\.\d+-[0-9a-f]{24}$/);
    expect(headerOf(image).header).toMatchObject({ format: ENCODER_IMAGE_FORMAT, encoding: "o200k_base" });

    const restored = start();
    expect(restored.source).toBe("image");
    expect(store.notes).toEqual([]);
    for (const text of ["", "hello world", "<|endoftext|>", "naïve café 🚀"]) {
      expect(count(built.encoder, text)).toBe(count(reference, text));
      expect(count(restored.encoder, text)).toBe(count(reference, text));
    }
  });

  it("gives tiktoken's tokens for every real transcript, started from the image", () => {
    start();
    const { encoder, source } = start();
    expect(source).toBe("image");
    const files = readdirSync(REAL_FIXTURES).filter((name) => name.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThanOrEqual(6);
    const tokens = (of: Tiktoken, text: string): Buffer => Buffer.from(of.encode_ordinary(text).buffer);
    for (const name of files) {
      const text = readFileSync(join(REAL_FIXTURES, name), "utf8");
      const expected = tokens(reference, text);
      expect(expected.length).toBeGreaterThan(10_000);
      expect(tokens(encoder, text).equals(expected), name).toBe(true);
    }
  });

  it("gives tiktoken's tokens for any text (generated: lone surrogates, NUL, emoji, special tokens)", () => {
    start();
    const { encoder } = start();
    const piece = fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.string({ unit: "binary" }),
      fc.constantFrom("<|endoftext|>", "\ud800", "\udfff", "\0", "\r\n", "    ", "🚀👍🏽", "日本語"),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), (parts) => {
        const text = parts.join("");
        expect(Array.from(encoder.encode_ordinary(text))).toEqual(Array.from(reference.encode_ordinary(text)));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps one image per encoding, each encoder in its own memory", () => {
    start("o200k_base");
    start("cl100k_base");
    const o200k = start("o200k_base");
    const cl100k = start("cl100k_base");
    expect([o200k.source, cl100k.source]).toEqual(["image", "image"]);
    expect(store.images.size).toBe(2);
    const text = "Compaction keeps long sessions inside the window: 12345 tokens.";
    expect(count(o200k.encoder, text)).toBe(count(reference, text));
    const cl100kReference = tiktoken.get_encoding("cl100k_base");
    expect(Array.from(cl100k.encoder.encode_ordinary(text))).toEqual(Array.from(cl100kReference.encode_ordinary(text)));
    cl100kReference.free();
  });

  it("is not disturbed by another user of tiktoken/lite in the process, nor disturbs one", () => {
    const text = "two encoders, two memories";
    const lite = require("tiktoken/lite") as typeof import("tiktoken/lite");
    const ranks = require("tiktoken/encoders/cl100k_base.json") as { bpe_ranks: string; special_tokens: Record<string, number>; pat_str: string };
    const theirs = new lite.Tiktoken(ranks.bpe_ranks, ranks.special_tokens, ranks.pat_str);
    const theirCount = count(theirs, text);
    start();
    const { encoder } = start();
    expect(count(theirs, text)).toBe(theirCount);
    theirs.free();
    // Loading tiktoken/lite anew points its shared glue at a new instance; ours is a private copy.
    delete require.cache[require.resolve("tiktoken/lite")];
    require("tiktoken/lite");
    expect(count(encoder, text)).toBe(count(reference, text));
  });

  it("without a ranks file for the encoding, says so and leaves the encoder to tiktoken", () => {
    expect(() => start("o200k_harmony_x")).toThrow(/Invalid encoding/); // tiktoken's own error
    expect(store.notes).toEqual([expect.stringMatching(/^could not use tiktoken's lite build for an image of the o200k_harmony_x encoder: .+; it is built as usual\.$/)]);
  });

  it("frees its WebAssembly memory with the encoder: starting and freeing many leaves the process's memory flat", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const settle = async (): Promise<number> => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((done) => setTimeout(done, 10));
      }
      return process.memoryUsage().rss;
    };
    start();
    const before = await settle();
    for (let i = 0; i < 12; i++) {
      const { encoder, source } = start();
      expect(source).toBe("image");
      count(encoder, "counted, then freed");
      encoder.free();
    }
    const grown = (await settle()) - before;
    // Each encoder's memory is 28 MB: kept, twelve would hold 336 MB.
    expect(grown).toBeLessThan(120 * 1024 * 1024);
  });

  it("frees like any encoder", () => {
    start();
    const { encoder } = start();
    encoder.free();
    expect(() => encoder.encode_ordinary("after free")).toThrow();
  });
});

describe("an image that cannot be used: a note, the encoder built as usual, the image stored again", () => {
  /** Spoils the image, starts again: the note, and that the new start built a right encoder and mended the image. */
  const spoiled = (spoil: (data: Buffer) => Buffer): string => {
    start();
    const [key, image] = theImage();
    store.images.set(key, spoil(image));
    const { encoder, source } = start();
    expect(source).toBe("built");
    expect(count(encoder, "a right count after all")).toBe(count(reference, "a right count after all"));
    expect(store.notes).toHaveLength(1);
    const note = store.notes[0] as string;
    expect(note).toMatch(new RegExp(`^ignored the saved o200k_base encoder memory:${key}: .+; it is built and saved again\\.$`));
    store.notes.length = 0;
    expect(start().source).toBe("image");
    expect(store.notes).toEqual([]);
    return note;
  };

  it("cut off", () => {
    expect(spoiled((data) => data.subarray(0, data.length - 1000))).toMatch(/bytes of memory, its header says/);
  });

  it("a byte of its memory changed", () => {
    expect(
      spoiled((data) => {
        const copy = Buffer.from(data);
        const at = headerOf(copy).memoryAt + 1_000_000;
        copy[at] = (copy[at] as number) ^ 0xff;
        return copy;
      }),
    ).toMatch(/does not match its checksum/);
  });

  it("its header changed", () => {
    expect(spoiled((data) => withHeader(data, (header) => (header["pointer"] = (header["pointer"] as number) + 8), { signed: false }))).toMatch(/does not match its checksum/);
  });

  it("not an image at all", () => {
    expect(spoiled(() => Buffer.from("{}\n"))).toMatch(/not a compaction-tiktoken-image v1 header/);
    expect(spoiled(() => Buffer.from("null\n"))).toMatch(/not a compaction-tiktoken-image v1 header/);
    expect(spoiled(() => Buffer.alloc(0))).toMatch(/no header line/);
    expect(spoiled(() => Buffer.from("not json\n"))).toMatch(/JSON/);
  });

  it("made by another tiktoken build", () => {
    expect(spoiled((data) => withHeader(data, (header) => (header["build"] = "tiktoken 0.0.1 0123")))).toMatch(/written for o200k_base by tiktoken 0\.0\.1/);
  });

  it("its encoder gives other tokens than the one it was saved from", () => {
    expect(spoiled((data) => withHeader(data, (header) => ((header["probes"] as number[][])[0] = [1, 2, 3])))).toMatch(
      /gave other tokens than the encoder it was saved from/,
    );
  });

  it("pointing at something that is not the encoder", () => {
    for (const pointer of [8, 1_048_576, 0]) {
      expect(spoiled((data) => withHeader(data, (header) => (header["pointer"] = pointer)))).toMatch(
        /: its encoder (failed on a probe text \(.+\)|gave other tokens than the encoder it was saved from); it is built/,
      );
      store.images.clear();
    }
  });
});

describe("a store that fails", () => {
  it("to read: a note, and the encoder built and stored", () => {
    store.read = () => {
      throw new Error("EACCES: permission denied, open '/cache/x.image'");
    };
    const { encoder, source } = start();
    expect(source).toBe("built");
    expect(count(encoder, "still counts")).toBe(count(reference, "still counts"));
    expect(store.notes).toEqual([expect.stringMatching(/^could not read the saved o200k_base encoder memory:o200k_base-.+: EACCES: permission denied, open '\/cache\/x\.image'; it is built and saved again\.$/)]);
    expect(store.images.size).toBe(1);
  });

  it("to write: a note, and the built encoder counts", () => {
    store.write = () => {
      throw Object.assign(new Error("no space left on device, write"), { code: "ENOSPC" });
    };
    const { encoder, source } = start();
    expect(source).toBe("built");
    expect(count(encoder, "still counts")).toBe(count(reference, "still counts"));
    expect(store.notes).toEqual([expect.stringMatching(/^could not save the o200k_base encoder to memory:o200k_base-.+: ENOSPC: no space left on device, write; the next run builds it again\.$/)]);
  });

  it("works without onNote and where, and with an onNote or a where that throws", () => {
    const images = new Map<string, Uint8Array>();
    const quiet: EncoderImageStore = { read: (key) => images.get(key), write: (key, image) => void images.set(key, image) };
    expect(startEncoderWithImage("o200k_base", quiet).source).toBe("built");
    images.set([...images.keys()][0] as string, new Uint8Array(3));
    expect(startEncoderWithImage("o200k_base", quiet).source).toBe("built");
    expect(startEncoderWithImage("o200k_base", quiet).source).toBe("image");
    const throwing: EncoderImageStore = {
      ...quiet,
      where: () => {
        throw new Error("where");
      },
      onNote: () => {
        throw new Error("onNote");
      },
    };
    images.set([...images.keys()][0] as string, new Uint8Array(3));
    const { encoder, source } = startEncoderWithImage("o200k_base", throwing);
    expect(source).toBe("built");
    expect(count(encoder, "still counts")).toBe(count(reference, "still counts"));
  });

});
