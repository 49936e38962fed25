/**
 * The packages as a user installs them (issue 13): what `npm pack` would publish for every public
 * workspace package. Each ships its LICENSE (MIT) and a README, says which Node it needs, where
 * its source lives, that it has no side effects and that it publishes publicly; every file its
 * `exports` and `bin` name is in the tarball, and every source map's sources are too. And a Node
 * bundle of the core does not pull in `typescript` (through cosmiconfig's TypeScript loader).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE_FLOOR = ">=22.19";

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  engines?: { node?: string };
  repository?: { type?: string; url?: string; directory?: string };
  sideEffects?: boolean;
  publishConfig?: { access?: string };
  exports?: unknown;
  bin?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const rootPackage = readJson<PackageJson & { workspaces: string[] }>(join(ROOT, "package.json"));

/** Every workspace folder (the root's `workspaces`, globs expanded by npm itself). */
const workspaces: { dir: string; pkg: PackageJson }[] = (
  JSON.parse(execFileSync("npm", ["query", ".workspace", "--json"], { cwd: ROOT, encoding: "utf8" })) as { location: string }[]
).map(({ location }) => ({ dir: location, pkg: readJson<PackageJson>(join(ROOT, location, "package.json")) }));
const published = workspaces.filter(({ pkg }) => pkg.private !== true);

/** What `npm pack --dry-run` lists for each public package: name -> the paths in the tarball. */
const packed: Map<string, Set<string>> = new Map(
  (
    JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", ...published.flatMap(({ pkg }) => ["-w", pkg.name])], {
        cwd: ROOT,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as { name: string; files: { path: string }[] }[]
  ).map((entry) => [entry.name, new Set(entry.files.map((file) => file.path))]),
);

/** Every string in an `exports` value (conditions and subpaths flattened). */
function exportTargets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(exportTargets);
  return [];
}

describe("the published packages", () => {
  it("are every workspace package but the repository's own test helpers and runnable examples", () => {
    expect(published.length).toBeGreaterThan(15);
    const unpublished = workspaces.filter(({ pkg }) => pkg.private === true);
    expect(unpublished.filter(({ dir }) => !dir.startsWith("examples/")).map(({ pkg }) => pkg.name).sort()).toEqual(["@compaction/fixtures", "@compaction/test"]);
    // An example is an app that shows a package in use, never a package of its own.
    for (const { dir, pkg } of workspaces.filter(({ dir }) => dir.startsWith("examples/"))) expect(pkg.private, dir).toBe(true);
    expect([...packed.keys()].sort()).toEqual(published.map(({ pkg }) => pkg.name).sort());
  });

  it.each(published.map(({ dir, pkg }) => [pkg.name, dir, pkg] as const))("%s: LICENSE, README, engines, repository, sideEffects, public access", (name, dir, pkg) => {
    const files = packed.get(name) as Set<string>;
    expect(files.has("LICENSE")).toBe(true);
    expect(readFileSync(join(ROOT, dir, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
    expect(pkg.license).toBe("MIT");
    expect(files.has("README.md")).toBe(true);
    expect(readFileSync(join(ROOT, dir, "README.md"), "utf8")).toMatch(new RegExp(`^# ${name.replace("/", "\\/")}\\n`));
    expect(pkg.engines?.node).toBe(NODE_FLOOR);
    expect(pkg.repository).toEqual({ type: "git", url: rootPackage.repository?.url, directory: dir });
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.publishConfig?.access).toBe("public");
  });

  it.each(published.map(({ pkg }) => [pkg.name, pkg] as const))("%s: every file exports and bin name is in the tarball, and no test file is", (name, pkg) => {
    const files = packed.get(name) as Set<string>;
    const named = [...exportTargets(pkg.exports), ...Object.values(pkg.bin ?? {})].map((target) => normalize(target));
    expect(named.length).toBeGreaterThan(0);
    for (const target of named) expect(files, `${name}: ${target}`).toContain(target);
    expect([...files].filter((file) => /\.test\.[jt]s$|(^|\/)test-support\//.test(file))).toEqual([]);
  });

  it.each(published.map(({ dir, pkg }) => [pkg.name, dir] as const))("%s: every source map points at sources the tarball holds", (name, dir) => {
    const files = packed.get(name) as Set<string>;
    const maps = [...files].filter((file) => file.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) {
      const { sources } = readJson<{ sources: string[] }>(join(ROOT, dir, map));
      for (const source of sources) expect(files, `${name}: ${map} -> ${source}`).toContain(normalize(join(dirname(map), source)));
    }
  });
});

describe("a Node bundle of the core", () => {
  const dir = mkdtempSync(join(ROOT, "test", ".bundle-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function bundle(source: string) {
    const entry = join(dir, `entry-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(entry, source);
    const result = await build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", write: false, metafile: true, logLevel: "silent" });
    const output = Object.values(result.metafile.outputs)[0];
    const included = Object.entries(output?.inputs ?? {}).filter(([, input]) => input.bytesInOutput > 0).map(([path]) => path);
    return { bytes: result.outputFiles.reduce((sum, file) => sum + file.contents.length, 0), included };
  }

  it("does not pull in typescript, for the whole core or for createCompactor", async () => {
    for (const source of ['export * from "@compaction/core";', 'import { createCompactor } from "@compaction/core"; console.log(createCompactor);']) {
      const { bytes, included } = await bundle(source);
      expect(included.filter((path) => path.includes("node_modules/typescript/"))).toEqual([]);
      // 10.4 MB with typescript; the core and its dependencies alone are well under 1 MB.
      expect(bytes).toBeLessThan(1024 * 1024);
    }
  });

  it("keeps only what is used (sideEffects: false): the Compactor alone is a fraction of the whole", async () => {
    const whole = await bundle('export * from "@compaction/core";');
    const compactor = await bundle('import { Compactor } from "@compaction/core"; console.log(Compactor);');
    // ajv is no longer in either (the config validator is generated at build time and ajv is
    // loaded only to compile a plugin's options), so the whole is about 300 kB and this 200 kB.
    expect(compactor.bytes).toBeLessThan(whole.bytes * 0.75);
    expect(compactor.included.filter((path) => /config[\\/](load-config|create-compactor|find-config-file)\.js$/.test(path))).toEqual([]);
    expect(compactor.included.some((path) => path.includes("node_modules/cosmiconfig/"))).toBe(false);
  });
});

// The config still loads at run time from the installed cosmiconfig (imported lazily).
describe("the core run by Node, not bundled", () => {
  it("loads a YAML .compactionrc through cosmiconfig", async () => {
    const { loadConfig } = await import("@compaction/core");
    const dir = mkdtempSync(join(tmpdir(), "compaction-publish-"));
    try {
      writeFileSync(join(dir, "package.json"), "{}");
      writeFileSync(join(dir, ".compactionrc"), "preset: rolling\ncontextWindow: 64000\n");
      const config = await loadConfig({ cwd: dir });
      expect(config).toMatchObject({ preset: "rolling", contextWindow: 64000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("validates a config and the built-in plugins' options with validators generated at build time, never loading ajv's compiler", () => {
    expect(packed.get("@compaction/core")?.has("dist/config/config-validator.generated.cjs")).toBe(true);
    for (const plugin of ["rolling", "recall", "safeguard", "layered", "sliding-window", "last-turn-injection"]) {
      expect(packed.get(`@compaction/plugin-${plugin}`)?.has("dist/options-validator.generated.cjs"), plugin).toBe(true);
    }
    const dir = mkdtempSync(join(tmpdir(), "compaction-publish-"));
    try {
      writeFileSync(join(dir, ".compactionrc.json"), JSON.stringify({ preset: "rolling", contextWindow: 64000 }));
      const script = `
        import { createRequire } from "node:module";
        import { loadConfig } from "@compaction/core";
        const config = await loadConfig({ cwd: ${JSON.stringify(dir)} });
        let invalid = "";
        try { await loadConfig({ cwd: ${JSON.stringify(dir)}, configPath: ${JSON.stringify(join(dir, "bad.json"))} }); } catch (error) { invalid = error.code; }
        const { createCompactor } = await import("@compaction/core");
        for (const preset of ["safeguard", "layered", "sliding-window", "rolling"]) (await createCompactor({ cwd: ${JSON.stringify(dir)}, preset })).dispose();
        const loaded = Object.keys(createRequire(import.meta.url).cache);
        console.log(JSON.stringify({ preset: config.preset, reserveTokens: config.reserveTokens, invalid, ajvCore: loaded.some((path) => /ajv[\\/]dist[\\/]core\.js$/.test(path)) }));`;
      writeFileSync(join(dir, "bad.json"), JSON.stringify({ preset: 3 }));
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: fileURLToPath(new URL(".", import.meta.url)), encoding: "utf8" });
      // No reserveTokens in the file: none in the config (each window gets its own reserve).
      expect(JSON.parse(out)).toEqual({ preset: "rolling", invalid: "COMPACTION_CONFIG_INVALID", ajvCore: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
