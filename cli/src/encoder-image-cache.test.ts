/**
 * The encoder image as a user meets it: each CLI run is a new process; the first one that counts
 * saves the built encoder's image, later ones start from it, and nothing they print changes.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_COUNT_CACHE_ENV } from "./count-cache.js";
import { ENCODER_IMAGE_MAX_AGE_MS, encoderImageDir, openEncoderImageCache } from "./encoder-image-cache.js";
import type { CliIo } from "./io.js";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

const CLI_BIN = fileURLToPath(new URL("../bin/compaction.js", import.meta.url));
let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const imagesDir = (): string => encoderImageDir({ env: { HOME: join(sandbox.root, "home") } } as unknown as CliIo);
const images = (): string[] => readdirSync(imagesDir()).filter((name) => name.endsWith(".image"));
const countsDir = (): string => join(sandbox.root, "home", ".cache", "compaction", "counts");
/** A run that must count every text: the session's kept counts are removed first. */
const countingRun = (args: readonly string[], env: Record<string, string> = {}): ReturnType<Sandbox["run"]> => {
  rmSync(countsDir(), { recursive: true, force: true });
  return sandbox.run(args, { NO_COLOR: "1", ...env });
};

/** The CLI run as a process that does not block this one, so two can run at once. */
function runAsync(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: sandbox.project,
      env: { PATH: process.env["PATH"] ?? "", HOME: join(sandbox.root, "home"), COMPACTION_SESSIONS_DIR: sandbox.sessionsDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the encoder image (the built binary)", () => {
  it("is saved by the first run that counts, and later runs print the same started from it", () => {
    const plain = countingRun(["compact", "--dry-run"], { [NO_COUNT_CACHE_ENV]: "1" });
    expect(plain.code, plain.stderr).toBe(0);
    const first = countingRun(["compact", "--dry-run"]);
    expect(images()).toEqual([expect.stringMatching(/^o200k_base-tiktoken-.+\.image$/)]);
    const file = join(imagesDir(), images()[0] as string);
    const saved = statSync(file).ino;
    const fromImage = countingRun(["compact", "--dry-run"]);
    expect(statSync(file).ino).toBe(saved); // read, not written again (a write replaces the file)
    for (const run of [first, fromImage]) {
      expect(run.stdout).toBe(plain.stdout);
      expect(run.stderr).toBe(plain.stderr);
    }
  });

  it(`is neither saved nor read with ${NO_COUNT_CACHE_ENV}=1`, () => {
    expect(countingRun(["compact", "--dry-run"], { [NO_COUNT_CACHE_ENV]: "1" }).code).toBe(0);
    expect(() => readdirSync(imagesDir())).toThrow(/ENOENT/);
  });

  it("is not made by a command that counts nothing", () => {
    expect(sandbox.run(["config"]).code).toBe(0);
    expect(() => readdirSync(imagesDir())).toThrow(/ENOENT/);
  });

  it("spoiled: a note naming it, the same output, and the image mended", () => {
    const plain = countingRun(["compact", "--dry-run"], { [NO_COUNT_CACHE_ENV]: "1" });
    countingRun(["compact", "--dry-run"]);
    const file = join(imagesDir(), images()[0] as string);
    const data = readFileSync(file);
    const half = Math.floor(data.length / 2);
    writeFileSync(file, data.subarray(0, half));
    const spoiled = countingRun(["compact", "--dry-run"]);
    expect(spoiled.code).toBe(0);
    expect(spoiled.stdout).toBe(plain.stdout);
    expect(spoiled.stderr).toBe(
      `compaction: note: ignored the saved o200k_base encoder ${file}: ` +
        `it holds ${half - data.indexOf(0x0a) - 1} bytes of memory, its header says ${data.length - data.indexOf(0x0a) - 1}; it is built and saved again.\n` +
        plain.stderr,
    );
    expect(readFileSync(file).length).toBe(data.length);
    const mended = statSync(file).ino;
    expect(countingRun(["compact", "--dry-run"]).stderr).toBe(plain.stderr);
    expect(statSync(file).ino).toBe(mended);
  });

  it("two first runs at once: both build it and print the same; one whole image is left, no temporary file", async () => {
    const plain = countingRun(["compact", "--dry-run"], { [NO_COUNT_CACHE_ENV]: "1" });
    rmSync(countsDir(), { recursive: true, force: true });
    const runs = await Promise.all([0, 1].map(() => runAsync(["compact", "--dry-run"])));
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(plain.stdout);
    }
    // Each writes its image to a temporary file and renames it into place: the last rename wins, whole.
    expect(readdirSync(imagesDir())).toEqual(images());
    expect(images()).toHaveLength(1);
    const image = join(imagesDir(), images()[0] as string);
    const saved = statSync(image).ino;
    const later = countingRun(["compact", "--dry-run"]);
    expect(later.stdout).toBe(plain.stdout);
    expect(later.stderr).toBe(plain.stderr);
    expect(statSync(image).ino).toBe(saved); // started from it, not built and written again
  });

  it("that cannot be saved: a note, and the run goes on; the hint to turn the cache off once, with the count cache's note", () => {
    const plain = countingRun(["compact", "--dry-run"], { [NO_COUNT_CACHE_ENV]: "1" });
    const cache = join(sandbox.root, "xdg-cache-is-a-file");
    writeFileSync(cache, "");
    const run = countingRun(["compact", "--dry-run"], { XDG_CACHE_HOME: cache });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(plain.stdout);
    expect(run.stderr).toMatch(
      new RegExp(
        "^compaction: note: could not save the built encoder to .+ENOTDIR.+; the next run builds it again\\.\\n" +
          "hint: set COMPACTION_NO_COUNT_CACHE=1 to stop using the cache\\.\\n" +
          "compaction: note: could not write the token count cache .+ENOTDIR.+; the next run counts this session again\\.\\n$",
      ),
    );
  });
});

describe("the encoder image on every real transcript", () => {
  const REAL = readdirSync(FIXTURES_DIR).filter((name) => name.endsWith(".jsonl"));
  it.each(REAL)("%s: the plan is the same with the encoder built and started from its image", { timeout: 60_000 }, (name) => {
    const args = ["compact", "--dry-run", "--json", "--session", join(FIXTURES_DIR, name), "--preset", "layered"];
    const plain = countingRun(args, { [NO_COUNT_CACHE_ENV]: "1" });
    expect(plain.stdout).toMatch(/^\{/);
    expect(countingRun(args).stdout).toBe(plain.stdout); // builds it, or starts from the image an earlier file saved
    expect(images()).toHaveLength(1);
    const saved = statSync(join(imagesDir(), images()[0] as string)).ino;
    const fromImage = countingRun(args);
    expect(statSync(join(imagesDir(), images()[0] as string)).ino).toBe(saved);
    expect(fromImage.stdout).toBe(plain.stdout);
    expect(fromImage.stderr).toBe(plain.stderr);
  });
});

describe("the encoder image files", () => {
  let home: string;
  let stderr: string;
  const io = (): CliIo => ({ env: { HOME: home }, stderr: { write: (text: string) => (stderr += text) } }) as unknown as CliIo;
  const dir = (): string => join(home, ".cache", "compaction", "encoders", "v1");
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "compaction-encoder-images-"));
    stderr = "";
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("are one file per key under the cache folder, readable by the user alone", () => {
    const store = openEncoderImageCache(io());
    expect(store?.read("o200k_base-x")).toBeUndefined();
    store?.write("o200k_base-x", new Uint8Array([1, 2, 3]));
    const file = join(dir(), "o200k_base-x.image");
    expect(store?.where?.("o200k_base-x")).toBe(file);
    expect([...readFileSync(file)]).toEqual([1, 2, 3]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir()).mode & 0o777).toBe(0o700);
    expect([...(store?.read("o200k_base-x") ?? [])]).toEqual([1, 2, 3]);
    store?.onNote?.("a note");
    expect(stderr).toBe("compaction: note: a note\n");
  });

  it("are off with COMPACTION_NO_COUNT_CACHE, and under XDG_CACHE_HOME when it is set", () => {
    expect(openEncoderImageCache({ env: { HOME: home, [NO_COUNT_CACHE_ENV]: "1" } } as unknown as CliIo)).toBeUndefined();
    const xdg = join(home, "xdg");
    expect(openEncoderImageCache({ env: { HOME: home, XDG_CACHE_HOME: xdg } } as unknown as CliIo)?.where?.("k")).toBe(join(xdg, "compaction", "encoders", "v1", "k.image"));
  });

  it("that cannot be read throw what went wrong; a missing one, or a file where the folder should be, is none; one that cannot be written is said with a hint", () => {
    mkdirSync(join(dir(), "k.image"), { recursive: true });
    expect(() => openEncoderImageCache(io())?.read("k")).toThrow(/EISDIR/);
    rmSync(join(home, ".cache"), { recursive: true });
    writeFileSync(join(home, ".cache"), "");
    expect(openEncoderImageCache(io())?.read("k")).toBeUndefined();
    openEncoderImageCache(io())?.write("k", new Uint8Array(1));
    expect(stderr).toMatch(/^compaction: note: could not save the built encoder to .+k\.image: ENOTDIR.+\nhint: set COMPACTION_NO_COUNT_CACHE=1 to stop using the cache\.\n$/);
  });

  it("untouched for 30 days are removed when another is written, with cut-off writes; a read touches its image", () => {
    mkdirSync(dir(), { recursive: true });
    const old = new Date(Date.now() - ENCODER_IMAGE_MAX_AGE_MS - 60_000);
    const recent = new Date(Date.now() - 24 * 60 * 60 * 1000);
    const files = ["o200k_base-old.image", "o200k_base-old.image.123456", "cl100k_base-recent.image", "notes.txt"];
    for (const name of files) {
      writeFileSync(join(dir(), name), "");
      const time = name.includes("recent") ? recent : old;
      utimesSync(join(dir(), name), time, time);
    }
    const store = openEncoderImageCache(io());
    store?.write("o200k_base-new", new Uint8Array(1));
    expect(readdirSync(dir()).sort()).toEqual(["cl100k_base-recent.image", "notes.txt", "o200k_base-new.image"]);
    store?.read("cl100k_base-recent");
    expect(Date.now() - statSync(join(dir(), "cl100k_base-recent.image")).mtimeMs).toBeLessThan(60_000);
  });
});
