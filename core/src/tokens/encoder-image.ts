/**
 * A saved image of a built tiktoken encoder, so that a new process starts it in 80–90 ms
 * instead of 0.25–0.35 s (o200k_base, measured on 2 cores).
 *
 * Building an encoder parses its ranks (200,000 for o200k) and compiles its pattern inside
 * tiktoken's WebAssembly, and a new process does it all again. What the build leaves is plain
 * data in the WebAssembly instance's memory (28 MB for o200k). The first process hands that
 * memory to a store (the host's: the CLI keeps it in a file); a later one makes a fresh instance
 * of the same WebAssembly, copies the image into its memory and has the same encoder, byte for
 * byte, so every count stays tiktoken's own.
 *
 * Why it is safe to use:
 * - An image is used only by the tiktoken build that made it: its key and header hold
 *   tiktoken's version, a hash of its WebAssembly and a CRC-32 of the encoding's ranks file.
 * - Its header and memory are checked against a CRC-32, and the encoder it gives must return, for
 *   a set of probe texts, the very tokens the freshly built encoder returned. On any difference
 *   or error the encoder is built as usual, `onNote` is told why, and the new image is stored.
 * - Each encoder started this way has its own instance of tiktoken's "lite" WebAssembly and its
 *   own copy of the JS glue around it (evaluated apart from require's cache), so no other user of
 *   tiktoken in the process shares (or replaces) the memory it lives in, and both are freed with
 *   the encoder.
 * - The image is taken right after the build, before any text is encoded: it holds the
 *   encoding's data, nothing of what was counted.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { compileFunction } from "node:vm";
import { crc32 } from "node:zlib";
import type { Tiktoken, TiktokenEncoding } from "tiktoken";

/**
 * Where a host keeps encoder images between processes (the CLI: one file per key in its cache
 * folder). `read` and `write` may throw to say what went wrong; it is told to `onNote` and the
 * encoder is built as usual, so a store's failure is never the count's.
 */
export interface EncoderImageStore {
  /** The image kept under `key`, or undefined when there is none. */
  read(key: string): Uint8Array | undefined;
  /** Keeps `image` under `key`, replacing any. */
  write(key: string, image: Uint8Array): void;
  /** Where `key` is kept, as a note names it (a file's path); the key itself otherwise. */
  where?(key: string): string;
  /** Told, in one sentence, about an image that could not be read, used or written. */
  onNote?(message: string): void;
}

/** The encoder and how it was started. */
export interface StartedEncoder {
  readonly encoder: Tiktoken;
  /** `image`: from a saved image; `built`: built from the ranks (and its image saved if it could be). */
  readonly source: "image" | "built";
}

/** The `format` of an image's header. */
export const ENCODER_IMAGE_FORMAT = "compaction-tiktoken-image";
export const ENCODER_IMAGE_VERSION = 1;
const WASM_PAGE_BYTES = 65_536;
/** Texts whose tokens an image's encoder must give exactly as the built encoder did. */
const PROBES: readonly string[] = [
  "Hello, world! The quick brown fox jumps over the lazy dog 1234567890.",
  "    const total = items.reduce((sum, item) => sum + item.size, 0); // bytes\n\treturn total;",
  "Ünïcödé — 日本語のテキスト, 한국어, Ελληνικά, русский; emoji 🚀👍🏽 and symbols ∑∞≠.",
  "<|endoftext|> and <|endofprompt|> are plain text here\r\n\r\n\n   \t  ",
  '{"role":"toolResult","content":[{"type":"text","text":"diff --git a/x b/x"}]}',
];

/** An image's header: the first line of its file, before the memory's bytes. */
interface ImageHeader {
  readonly format: typeof ENCODER_IMAGE_FORMAT;
  readonly version: typeof ENCODER_IMAGE_VERSION;
  readonly encoding: string;
  /** Identifies the tiktoken build: its version, a hash of its WebAssembly and a CRC-32 of the ranks file. */
  readonly build: string;
  /** Where the encoder's object sits in the memory. */
  readonly pointer: number;
  readonly bytes: number;
  /** Each probe's tokens, as the built encoder gave them. */
  readonly probes: readonly (readonly number[])[];
  /** CRC-32 of the other fields and the memory (`imageChecksum`). */
  readonly crc32: number;
}

/** The part of the WebAssembly JS API used here (the project's TypeScript lib has no such types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: Record<string, object>) => { readonly exports: Record<string, unknown> };
  readonly Memory: abstract new (...args: never[]) => WasmMemory;
};

/** The parts of tiktoken's lite JS glue this module uses. */
interface LiteGlue {
  readonly Tiktoken: new (ranks: string, specialTokens: Record<string, number>, pattern: string) => Tiktoken;
  __wbg_set_wasm(exports: Record<string, unknown>): void;
}

interface LiteBuild {
  /** A new copy of the lite JS glue, with its own module-level state. */
  readonly glue: () => LiteGlue;
  readonly module: object;
  readonly version: string;
  readonly wasmHash: string;
}

interface Ranks {
  readonly bpe_ranks: string;
  readonly special_tokens: Record<string, number>;
  readonly pat_str: string;
}

const require = createRequire(import.meta.url);
let compiledLite: LiteBuild | undefined;

/** tiktoken's lite build, compiled once per process. */
function liteBuild(): LiteBuild {
  if (compiledLite !== undefined) return compiledLite;
  const liteDir = dirname(require.resolve("tiktoken/lite"));
  const wasm = readFileSync(join(liteDir, "tiktoken_bg.wasm"));
  const packageFile = join(liteDir, "..", "package.json");
  const { version } = JSON.parse(readFileSync(packageFile, "utf8")) as { version: string };
  // The glue as a function of its module, compiled once and called for each copy: a copy loaded
  // through require would be shared through its cache, and kept alive by its parent module.
  const gluePath = join(liteDir, "tiktoken_bg.cjs");
  const glueModule = compileFunction(readFileSync(gluePath, "utf8"), ["module", "exports", "require"], { filename: gluePath });
  compiledLite = {
    glue: () => {
      const module = { exports: {}, require };
      glueModule(module, module.exports, require);
      return module.exports as LiteGlue;
    },
    module: new WebAssembly.Module(wasm),
    version,
    wasmHash: createHash("sha256").update(wasm).digest("hex"),
  };
  return compiledLite;
}

/** A fresh instance of the lite WebAssembly with its own glue; its memory as it starts. */
function newInstance(build: LiteBuild): { glue: LiteGlue; memory: WasmMemory } {
  const glue = build.glue();
  const instance = new WebAssembly.Instance(build.module, { "./tiktoken_bg.js": glue });
  glue.__wbg_set_wasm(instance.exports);
  const memory = instance.exports["memory"];
  if (!(memory instanceof WebAssembly.Memory)) throw new Error("tiktoken's lite WebAssembly exports no memory");
  return { glue, memory };
}

function ranksFile(encoding: string): string {
  return require.resolve(`tiktoken/encoders/${encoding}.json`);
}

/**
 * The key of `encoding`'s image with this tiktoken build (safe as a file name), and the build's
 * identity as a header holds it.
 */
function imageKey(encoding: string, build: LiteBuild): { key: string; id: string } {
  // The ranks file by its content, not its time: an install sets a file's time, and each new time
  // would mean a new image.
  const ranks = crc32(readFileSync(ranksFile(encoding)));
  const id = createHash("sha256")
    .update(`${build.version}\n${build.wasmHash}\n${encoding}\n${ranks}`)
    .digest("hex")
    .slice(0, 24);
  return { key: `${encoding}-tiktoken-${build.version}-${id}`, id: `tiktoken ${build.version} ${id}` };
}

function probeTokens(encoder: Tiktoken): number[][] {
  return PROBES.map((text) => Array.from(encoder.encode_ordinary(text)));
}

function sameTokens(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): boolean {
  return a.length === b.length && a.every((tokens, i) => tokens.length === b[i]?.length && tokens.every((token, j) => token === b[i]?.[j]));
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}

/** @internal The CRC-32 an image's header holds: of its other fields, in order, and its memory. */
export function imageChecksum(fields: Omit<ImageHeader, "crc32">, memory: Uint8Array): number {
  return crc32(memory, crc32(JSON.stringify(fields)));
}

function parseHeader(image: Uint8Array): { header: ImageHeader; memory: Buffer } {
  const data = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  const end = data.indexOf(0x0a);
  if (end < 0 || end > 64 * 1024) throw new Error("it has no header line");
  const header = JSON.parse(data.subarray(0, end).toString("utf8")) as Partial<ImageHeader> | null;
  if (typeof header !== "object" || header === null || header.format !== ENCODER_IMAGE_FORMAT || header.version !== ENCODER_IMAGE_VERSION) {
    throw new Error(`its header is not a ${ENCODER_IMAGE_FORMAT} v${ENCODER_IMAGE_VERSION} header`);
  }
  const memory = data.subarray(end + 1);
  if (header.bytes !== memory.length || memory.length % WASM_PAGE_BYTES !== 0) {
    throw new Error(`it holds ${memory.length} bytes of memory, its header says ${String(header.bytes)}`);
  }
  if (typeof header.pointer !== "number" || !Array.isArray(header.probes) || header.probes.length !== PROBES.length) {
    throw new Error("its header lacks the encoder's pointer or probes");
  }
  return { header: header as ImageHeader, memory };
}

/** The encoder an image holds; throws saying why it cannot be used. */
function restore(image: Uint8Array, encoding: string, buildId: string, build: LiteBuild): Tiktoken {
  const { header, memory } = parseHeader(image);
  if (header.encoding !== encoding || header.build !== buildId) throw new Error(`it was written for ${header.encoding} by ${header.build}`);
  const { crc32: stored, ...fields } = header;
  if (imageChecksum(fields, memory) !== stored) throw new Error("it does not match its checksum");
  const fresh = newInstance(build);
  const pages = memory.length / WASM_PAGE_BYTES - fresh.memory.buffer.byteLength / WASM_PAGE_BYTES;
  if (pages < 0) throw new Error("its memory is smaller than the WebAssembly's own");
  if (pages > 0) fresh.memory.grow(pages);
  new Uint8Array(fresh.memory.buffer).set(memory);
  // What the glue's own constructor leaves: an object of its class pointing at the encoder.
  const encoder = Object.create(fresh.glue.Tiktoken.prototype) as Tiktoken & { __wbg_ptr: number };
  encoder.__wbg_ptr = header.pointer;
  let probes: number[][];
  try {
    probes = probeTokens(encoder);
  } catch (error) {
    throw new Error(`its encoder failed on a probe text (${reason(error)})`);
  }
  if (!sameTokens(probes, header.probes)) throw new Error("its encoder gave other tokens than the encoder it was saved from");
  return encoder;
}

/** Builds the encoder in a fresh lite instance; its memory right after the build, as an image. */
function build(encoding: string, buildId: string, liteBuild: LiteBuild): { encoder: Tiktoken; image: Buffer } {
  const fresh = newInstance(liteBuild);
  // Parsed, not required: require's cache would keep the 2 MB of ranks for the process's life.
  const ranks = JSON.parse(readFileSync(ranksFile(encoding), "utf8")) as Ranks;
  const encoder = new fresh.glue.Tiktoken(ranks.bpe_ranks, ranks.special_tokens, ranks.pat_str);
  const memory = Buffer.from(new Uint8Array(fresh.memory.buffer)); // a copy, before anything else runs in it
  const fields: Omit<ImageHeader, "crc32"> = {
    format: ENCODER_IMAGE_FORMAT,
    version: ENCODER_IMAGE_VERSION,
    encoding,
    build: buildId,
    pointer: (encoder as Tiktoken & { __wbg_ptr: number }).__wbg_ptr,
    bytes: memory.length,
    probes: probeTokens(encoder),
  };
  const header: ImageHeader = { ...fields, crc32: imageChecksum(fields, memory) };
  return { encoder, image: Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, "utf8"), memory]) };
}

/**
 * Starts tiktoken's encoder for `encoding` from its image in `store`, or builds it and stores its
 * image. Never throws for the image's sake: what goes wrong with it is told to `store.onNote` and
 * the encoder is built (from tiktoken's lite build, else as tiktoken gives it); an error
 * building the encoder itself (an unknown encoding) is thrown.
 */
export function startEncoderWithImage(encoding: string, store: EncoderImageStore): StartedEncoder {
  const note = (message: string): void => {
    try {
      store.onNote?.(message);
    } catch {
      // A host's listener that fails is no reason to fail the count.
    }
  };
  const usual = (): StartedEncoder => ({ encoder: (require("tiktoken") as typeof import("tiktoken")).get_encoding(encoding as TiktokenEncoding), source: "built" });
  let lite: LiteBuild;
  let key: string;
  let id: string;
  try {
    lite = liteBuild();
    ({ key, id } = imageKey(encoding, lite));
  } catch (error) {
    // An installed tiktoken without its lite build or ranks files: the encoder as tiktoken gives it.
    note(`could not use tiktoken's lite build for an image of the ${encoding} encoder: ${reason(error)}; it is built as usual.`);
    return usual();
  }
  let where = key;
  try {
    where = store.where?.(key) ?? key;
  } catch {
    // Only a note's wording.
  }
  let image: Uint8Array | undefined;
  try {
    image = store.read(key);
  } catch (error) {
    note(`could not read the saved ${encoding} encoder ${where}: ${reason(error)}; it is built and saved again.`);
  }
  if (image !== undefined) {
    try {
      return { encoder: restore(image, encoding, id, lite), source: "image" };
    } catch (error) {
      note(`ignored the saved ${encoding} encoder ${where}: ${reason(error)}; it is built and saved again.`);
    }
  }
  let built: { encoder: Tiktoken; image: Buffer };
  try {
    built = build(encoding, id, lite);
  } catch (error) {
    note(`could not build the ${encoding} encoder in tiktoken's lite build: ${reason(error)}; it is built as usual, with no image.`);
    return usual();
  }
  try {
    store.write(key, built.image);
  } catch (error) {
    note(`could not save the ${encoding} encoder to ${where}: ${reason(error)}; the next run builds it again.`);
  }
  return { encoder: built.encoder, source: "built" };
}
