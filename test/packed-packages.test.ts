/**
 * Every public workspace package, packed as `npm pack` would publish it, passes publint (its
 * package.json against the files in the tarball: exports, types, files, bin, module format) and
 * "are the types wrong" (@arethetypeswrong/core: TypeScript resolves the types each entry point
 * declares, under node16 and bundler resolution). And the release machinery covers the same
 * packages: Changesets versions all of them as one and ignores the private ones, and
 * `npm run release` refuses to publish while the repository URL is the placeholder.
 *
 * The packages are ESM only (`"type": "module"`, no `require` condition), so the type checks
 * are attw's "esm-only" profile: CommonJS resolutions (node10, node16 from CJS) are not checked.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkPackage, createPackageFromTarballData, type Problem } from "@arethetypeswrong/core";
import { problemKindInfo } from "@arethetypeswrong/core/problems";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packPublicWorkspaces, type PackedPackage, publicWorkspaces, ROOT, workspaces } from "./support/packed-workspaces.js";

/** Resolutions an ESM-only package does not serve. */
const NOT_CHECKED_RESOLUTIONS = new Set(["node10", "node16-cjs"]);

let packed: ReturnType<typeof packPublicWorkspaces>;
beforeAll(() => {
  packed = packPublicWorkspaces();
}, 120_000);
afterAll(() => packed?.remove());

const published = publicWorkspaces();
const tarballOf = (name: string): PackedPackage => {
  const found = packed.packages.find((pkg) => pkg.name === name);
  if (found === undefined) throw new Error(`${name} was not packed`);
  return found;
};

/** attw's problem, as one line: its kind's description and where. */
function describeProblem(problem: Problem): string {
  const where =
    "entrypoint" in problem ? `${problem.entrypoint} (${problem.resolutionKind})` : "typesFileName" in problem ? problem.typesFileName : "fileName" in problem ? problem.fileName : "";
  return `${problem.kind} at ${where}: ${problemKindInfo[problem.kind].description}`;
}

describe("the packed packages", () => {
  it("are every public workspace package", () => {
    expect(published.length).toBeGreaterThan(20);
    expect(packed.packages.map(({ name }) => name).sort()).toEqual(published.map(({ name }) => name).sort());
  });

  it.each(published.map(({ name }) => [name]))("%s: publint finds nothing, suggestions included (strict)", async (name) => {
    const data = readFileSync(tarballOf(name).tarball);
    const tarball = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    const { messages, pkg } = await publint({ pack: { tarball }, level: "suggestion", strict: true });
    expect(messages.map((message) => `${name}: publint ${message.type} ${message.code}: ${formatMessage(message, pkg, { color: false })}`)).toEqual([]);
  });

  it.each(published.map(({ name }) => [name]))("%s: every entry point's types resolve and match its code (are the types wrong, esm-only)", async (name) => {
    const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarballOf(name).tarball))));
    if (analysis.types === false) throw new Error(`${name}: the package has no types (are the types wrong: untyped)`);
    expect(Object.keys(analysis.entrypoints)).toContain(".");
    const problems = analysis.problems.filter((problem) => !("resolutionKind" in problem && NOT_CHECKED_RESOLUTIONS.has(problem.resolutionKind)));
    expect(problems.map((problem) => `${name}: ${describeProblem(problem)}`)).toEqual([]);
  });
});

describe("Changesets' configuration", () => {
  const config = JSON.parse(readFileSync(join(ROOT, ".changeset/config.json"), "utf8")) as { fixed: string[][]; ignore: string[]; access: string; baseBranch: string };

  it("versions every public package as one (one fixed group), so a package added later must join it", () => {
    expect(config.fixed).toHaveLength(1);
    expect([...(config.fixed[0] ?? [])].sort()).toEqual(published.map(({ name }) => name).sort());
    expect(config.access).toBe("public");
  });

  it("ignores every private workspace (the tests, the fixtures, the examples) and nothing else", () => {
    const matches = (pattern: string, name: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(name);
    for (const workspace of workspaces()) {
      expect(config.ignore.some((pattern) => matches(pattern, workspace.name)), workspace.name).toBe(workspace.private);
    }
  });
});

describe("npm run release", () => {
  const release = join(ROOT, "scripts/release.mjs");
  const check = (root: string) => spawnSync(process.execPath, [release, "--check", "--root", root], { encoding: "utf8" });

  /** A checkout with a root, a public package and a private one, each with the given repository URL. */
  function checkout(urls: { root: string; published: string; private: string }): string {
    const root = mkdtempSync(join(tmpdir(), "compaction-release-"));
    const write = (dir: string, pkg: object) => {
      mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, dir, "package.json"), JSON.stringify(pkg));
    };
    write(".", { name: "compaction", private: true, workspaces: ["core", "examples/*"], repository: { type: "git", url: urls.root } });
    write("core", { name: "@compaction/core", repository: { type: "git", url: urls.published, directory: "core" } });
    write("examples/app", { name: "@compaction/example-app", private: true, repository: { type: "git", url: urls.private } });
    return root;
  }

  it("refuses to publish from this repository while its URL is the placeholder, naming the files", () => {
    const { status, stderr } = check(ROOT);
    expect(status).toBe(1);
    expect(stderr).toContain("refusing to publish");
    expect(stderr).toContain("github.com/compaction/compaction");
    for (const { dir } of published) expect(stderr).toContain(`  ${dir}/package.json\n`);
  });

  it("refuses when one published package still has it, and passes once none has (private ones are not published)", () => {
    const real = "git+https://example.org/team/compaction.git";
    const placeholder = "git+https://github.com/compaction/compaction.git";
    const bad = checkout({ root: real, published: placeholder, private: placeholder });
    const good = checkout({ root: real, published: real, private: placeholder });
    try {
      const refused = check(bad);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain("1 package.json files still have the placeholder");
      expect(refused.stderr).toContain("  core/package.json\n");
      expect(refused.stderr).not.toContain("examples/app");
      const passed = check(good);
      expect(passed.stderr).toBe("");
      expect(passed.status).toBe(0);
    } finally {
      rmSync(bad, { recursive: true, force: true });
      rmSync(good, { recursive: true, force: true });
    }
  });
});
