/**
 * The encoder image made ahead of the first run in this repository (scripts/prepare-encoder.mjs,
 * which the repository's `prepare` runs after its build): the first CLI run after it starts the
 * encoder from the image, and nothing it does can fail an install. The published CLI has no
 * install script: its first run saves the image (encoder-image-cache.test.ts).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NO_COUNT_CACHE_ENV } from "./count-cache.js";
import { encoderImageDir } from "./encoder-image-cache.js";
import type { CliIo } from "./io.js";
import { prepareEncoderImage } from "./prepare-encoder.js";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

const PREPARE = fileURLToPath(new URL("../../scripts/prepare-encoder.mjs", import.meta.url));
const CLI_ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let sandbox: Sandbox;
let scratch: string | undefined;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => {
  sandbox.remove();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const home = (): string => join(sandbox.root, "home");
const imagesDir = (): string => encoderImageDir({ env: { HOME: home() } } as unknown as CliIo);
const images = (): string[] => readdirSync(imagesDir()).filter((name) => name.endsWith(".image"));
/** `node scripts/prepare-encoder.mjs` as `prepare` runs it after `npm ci`: with the user's HOME. */
const prepare = (env: Record<string, string> = {}, script = PREPARE) =>
  spawnSync(process.execPath, [script], { cwd: ROOT, encoding: "utf8", env: { PATH: process.env["PATH"] ?? "", HOME: home(), ...env } });
const ioFor = (env: Record<string, string | undefined>) => {
  let stderr = "";
  const io: CliIo = { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) }, stdin: Readable.from([]), env, cwd: sandbox.project };
  return { io, stderr: () => stderr };
};

describe("scripts/prepare-encoder.mjs (the repository's prepare, after its build)", () => {
  it("saves the encoder's image quietly, and the first CLI run starts from it and prints what it would have", () => {
    const plain = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1", [NO_COUNT_CACHE_ENV]: "1" });
    expect(plain.code, plain.stderr).toBe(0);
    const run = prepare();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toBe("");
    expect(images()).toEqual([expect.stringMatching(/^o200k_base-tiktoken-.+\.image$/)]);
    const file = join(imagesDir(), images()[0] as string);
    const saved = statSync(file).ino;
    const first = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(statSync(file).ino).toBe(saved); // read, not built and written again (a write replaces the file)
    expect(first.stdout).toBe(plain.stdout);
    expect(first.stderr).toBe(plain.stderr);
    // A second install (an update of another package) reads the image and leaves it as it is.
    expect(prepare().status).toBe(0);
    expect(statSync(file).ino).toBe(saved);
  });

  it(`does nothing with ${NO_COUNT_CACHE_ENV}=1`, () => {
    const run = prepare({ [NO_COUNT_CACHE_ENV]: "1" });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe("");
    expect(() => readdirSync(imagesDir())).toThrow(/ENOENT/);
  });

  it("exits 0 with a note when the cache folder cannot be written", () => {
    writeFileSync(join(home(), ".cache"), "a file where the cache folder would be");
    const run = prepare();
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^compaction: note: could not save the built encoder to .*\.image: .*; the next run builds it again\.\n/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("does nothing, silently, when the CLI is not built (a build that failed or was left out)", () => {
    scratch = mkdtempSync(join(tmpdir(), "compaction-prepare-"));
    mkdirSync(join(scratch, "scripts"));
    copyFileSync(PREPARE, join(scratch, "scripts", "prepare-encoder.mjs"));
    const run = prepare({}, join(scratch, "scripts", "prepare-encoder.mjs"));
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe("");
    expect(() => readdirSync(imagesDir())).toThrow(/ENOENT/);
    // A build that fails as it loads: a note, and still 0.
    mkdirSync(join(scratch, "cli", "dist"), { recursive: true });
    writeFileSync(join(scratch, "cli", "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(join(scratch, "cli", "dist", "prepare-encoder.js"), 'throw new Error("a stale build");\n');
    const stale = prepare({}, join(scratch, "scripts", "prepare-encoder.mjs"));
    expect(stale.status).toBe(0);
    expect(stale.stderr).toBe("compaction: note: could not prepare the encoder: a stale build; the first run builds it.\n");
  });

  it("is not the CLI's install script (the CLI has none: pnpm and others do not run them); the repository's prepare runs it after the build", () => {
    const cli = JSON.parse(readFileSync(join(CLI_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) expect(cli.scripts[script], script).toBeUndefined();
    expect(readdirSync(join(CLI_ROOT, "bin"))).toEqual(["compaction.js"]);
    const prepareScript = readFileSync(join(ROOT, "scripts", "prepare.mjs"), "utf8");
    // `|| exit 0` is not needed: prepare.mjs ignores the warm-up's exit status.
    expect(prepareScript.lastIndexOf('"prepare-encoder.mjs"')).toBeGreaterThan(prepareScript.indexOf('[turbo, "run", "build"'));
  });
});

describe("prepareEncoderImage", () => {
  it("builds and saves the image, then finds it; off with the cache turned off", () => {
    const { io, stderr } = ioFor({ HOME: home() });
    expect(prepareEncoderImage(io)).toBe("built");
    expect(prepareEncoderImage(io)).toBe("image");
    expect(images()).toHaveLength(1);
    expect(prepareEncoderImage(ioFor({ HOME: home(), [NO_COUNT_CACHE_ENV]: "1" }).io)).toBe("off");
    expect(stderr()).toBe("");
  });

  it("writes nothing where the cache folder (or the nearest folder there is above it) is another user's: sudo npm install -g keeping the user's HOME", () => {
    const { io, stderr } = ioFor({ HOME: home() });
    const owner = statSync(home()).uid;
    expect(prepareEncoderImage(io, { uid: owner + 1 })).toBe("not-yours");
    expect(() => readdirSync(join(home(), ".cache"))).toThrow(/ENOENT/);
    mkdirSync(imagesDir(), { recursive: true });
    expect(prepareEncoderImage(io, { uid: owner + 1 })).toBe("not-yours");
    expect(images()).toEqual([]);
    expect(prepareEncoderImage(io, { uid: owner })).toBe("built");
    expect(stderr()).toBe("");
  });

  it("says so, and does not throw, for an encoding tiktoken does not know", () => {
    const { io, stderr } = ioFor({ HOME: home() });
    expect(prepareEncoderImage(io, { encoding: "o300k_nonsense" })).toBe("failed");
    expect(stderr()).toMatch(/^compaction: note: could not prepare the o300k_nonsense encoder: .+; the first run builds it\.$/m);
  });
});
