/**
 * The direction of imports between the packages (docs/architecture.md, "Layout"): the engine imports none of
 * the others; the transcript store imports only the engine; the model-summarizer machinery the
 * engine and the extractive summarizer (its fallback);
 * the context manager imports the engine and the transcript store; a plugin imports the engine
 * (recall may import the transcript store, a model summarizer its machinery) and never another
 * plugin; a preset imports the plugins it lists; a framework integration (AI SDK) imports only
 * the engine and takes its framework as a peer dependency (its `thread` entry, in `src/thread/`,
 * also the context manager, the transcript store and recall, as optional peers); a database store (stores/*) imports the engine and
 * the transcript store; the replay imports the engine, the transcript store
 * and the context manager. Checked on every source file's imports and on
 * every package.json's dependencies, so a forbidden import fails here before it ships.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface Workspace {
  readonly dir: string;
  readonly name: string;
  readonly manifest: {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
}

function workspaces(): Workspace[] {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] };
  const dirs = root.workspaces.flatMap((pattern) =>
    pattern.endsWith("/*")
      ? readdirSync(join(ROOT, pattern.slice(0, -2)))
          .map((entry) => join(pattern.slice(0, -2), entry))
          .filter((dir) => statSync(join(ROOT, dir, "package.json"), { throwIfNoEntry: false }) !== undefined)
      : [pattern],
  );
  return dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as Workspace["manifest"] & { name: string };
    return { dir, name: manifest.name, manifest };
  });
}

const ENGINE = "@compaction/core";
const STORE = "@compaction/transcript";
const LOOP = "@compaction/context-manager";
const MODEL = "@compaction/model-summarizer";
const REPLAY = "@compaction/replay";
const EXTRACTIVE = "@compaction/plugin-summarizer-extractive";

/**
 * Framework integrations depend only on the engine and their framework (a peer dependency with
 * the supported majors), so a framework user installs nothing of pi's or the transcript store's.
 */
const FRAMEWORK_INTEGRATIONS: Readonly<Record<string, { readonly framework: string; readonly majors: string }>> = {
  "@compaction/ai-sdk": { framework: "ai", majors: "^6.0.0 || ^7.0.0" },
  "@compaction/langchain": { framework: "@langchain/core", majors: "^1.0.0" },
};

/**
 * A framework integration's `thread` entry (`@compaction/<host>/thread`, sources under
 * `src/thread/`) keeps a thread's history in a session store: it may import the context manager,
 * the transcript store's types and recall, taken as optional peer dependencies, so the main entry
 * still installs nothing of them.
 */
const THREAD_ENTRY_DIR = "src/thread/";
const THREAD_ENTRY_IMPORTS: ReadonlySet<string> = new Set([ENGINE, STORE, LOOP, "@compaction/plugin-recall"]);

function isThreadEntryFile(workspace: Workspace, file: string): boolean {
  return Object.hasOwn(FRAMEWORK_INTEGRATIONS, workspace.name) && relative(join(ROOT, workspace.dir), file).split("\\").join("/").startsWith(THREAD_ENTRY_DIR);
}

/**
 * The @compaction packages `from` may import, or undefined where any is allowed (the CLI,
 * integrations, examples and the cross-package tests sit on top of everything).
 */
function allowedImports(from: Workspace): ReadonlySet<string> | undefined {
  const { name, dir } = from;
  if (name === ENGINE) return new Set();
  if (name === STORE) return new Set([ENGINE]);
  // The machinery's `fallback: "extractive"` is that one summarizer, which needs no model: so a
  // model summarizer falls back to it in any host, whatever else the compactor has installed.
  if (name === MODEL) return new Set([ENGINE, EXTRACTIVE]);
  if (name === LOOP) return new Set([ENGINE, STORE]);
  // The replay runs a session as a host does (the context manager) and measures it.
  if (name === REPLAY) return new Set([ENGINE, STORE, LOOP]);
  // The real transcripts' loaders read Codex rollouts with the transcript store's reader.
  if (name === "@compaction/fixtures") return new Set([ENGINE, STORE]);
  if (Object.hasOwn(FRAMEWORK_INTEGRATIONS, name)) return new Set([ENGINE]);
  if (dir.startsWith("plugins/")) {
    const allowed = new Set([ENGINE]);
    if (name === "@compaction/plugin-recall") allowed.add(STORE);
    if (name.startsWith("@compaction/plugin-summarizer-")) allowed.add(MODEL);
    return allowed;
  }
  // A database store implements the transcript store's contract on the engine's errors.
  if (dir.startsWith("stores/")) return new Set([ENGINE, STORE]);
  if (dir.startsWith("presets/")) {
    // A preset is data plus the plugins it lists, and those are its dependencies.
    const listed = Object.keys(from.manifest.dependencies ?? {}).filter((dep) => dep.startsWith("@compaction/plugin-"));
    return new Set([ENGINE, ...listed]);
  }
  return undefined;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(full);
    }
  };
  walk(join(ROOT, dir, "src"));
  return out;
}

/** Package names a file imports: static imports and re-exports, `import()` and `require()`. */
export function importedPackages(source: string): string[] {
  const names = new Set<string>();
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](@compaction\/[^/"']+)/gm;
  for (const match of source.matchAll(pattern)) names.add(match[1] as string);
  return [...names];
}

function isTestFile(file: string): boolean {
  return /\.test\.ts$|[\\/](test-support|__fixtures__|testing)[\\/]/.test(file);
}

describe("package boundaries", () => {
  const all = workspaces();

  it("finds the engine, the transcript store, the context manager and the model-summarizer packages", () => {
    const names = all.map((workspace) => workspace.name);
    expect(names).toEqual(expect.arrayContaining([ENGINE, STORE, LOOP, MODEL]));
  });

  it("reads imports of every form", () => {
    const source = [
      'import { a } from "@compaction/core";',
      'export { b } from "@compaction/transcript/sub";',
      'const c = await import("@compaction/context-manager");',
      'const d = require("@compaction/model-summarizer");',
      'import "@compaction/plugin-recall";',
      'import type { e } from "@compaction/core/testing";',
    ].join("\n");
    expect(importedPackages(source).sort()).toEqual([
      "@compaction/context-manager",
      "@compaction/core",
      "@compaction/model-summarizer",
      "@compaction/plugin-recall",
      "@compaction/transcript",
    ]);
  });

  it("the engine's sources write no files and take no locks (that is the transcript store's job)", () => {
    const writes =
      /\b(writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|rename|renameSync|unlink|unlinkSync|rm|rmSync|mkdir|mkdirSync|open|openSync)\s*\(|["'](proper-lockfile|write-file-atomic)["']/;
    const offenders = sourceFiles("core")
      .filter((file) => !isTestFile(file))
      .filter((file) => writes.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });

  it("the engine depends on no agent framework (the Responses and Anthropic adapters read plain objects)", () => {
    const frameworks = /["'](@openai\/agents[^"']*|openai|@anthropic-ai\/[^"']+|langchain|@langchain\/[^"']+|ai)["']/;
    const core = all.find((workspace) => workspace.name === ENGINE);
    const declared = Object.keys({ ...core?.manifest.dependencies, ...core?.manifest.peerDependencies });
    expect(declared.filter((dep) => frameworks.test(JSON.stringify(dep)))).toEqual([]);
    const offenders = sourceFiles("core")
      .filter((file) => !isTestFile(file))
      .filter((file) => /\bfrom\s*["'](@openai\/agents|openai|langchain|@langchain\/|ai["'])/.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });

  for (const workspace of all) {
    const allowed = allowedImports(workspace);
    if (allowed === undefined) continue;

    it(`${workspace.name} imports ${allowed.size === 0 ? "no other @compaction package" : `only ${[...allowed].join(", ")}`} in its sources`, () => {
      const violations: string[] = [];
      for (const file of sourceFiles(workspace.dir)) {
        // Tests may use the others' test helpers and real stores (core's tests never do).
        if (isTestFile(file) && workspace.name !== ENGINE) continue;
        const may = isThreadEntryFile(workspace, file) ? THREAD_ENTRY_IMPORTS : allowed;
        for (const name of importedPackages(readFileSync(file, "utf8"))) {
          if (name !== workspace.name && !may.has(name)) violations.push(`${relative(ROOT, file)} imports ${name}`);
        }
      }
      expect(violations).toEqual([]);
    });

    const framework = FRAMEWORK_INTEGRATIONS[workspace.name];
    if (framework !== undefined) {
      it(`${workspace.name} takes ${framework.framework} as a peer dependency (${framework.majors}), not as a dependency`, () => {
        expect(workspace.manifest.peerDependencies?.[framework.framework]).toBe(framework.majors);
        expect(workspace.manifest.dependencies?.[framework.framework]).toBeUndefined();
      });
    }

    it(`${workspace.name} depends only on the packages it may import`, () => {
      const declared = [...Object.keys(workspace.manifest.dependencies ?? {}), ...Object.keys(workspace.manifest.peerDependencies ?? {})];
      // A framework integration's thread entry's packages are optional peers (the main entry needs none of them).
      const optionalPeers = Object.hasOwn(FRAMEWORK_INTEGRATIONS, workspace.name)
        ? Object.entries(workspace.manifest.peerDependenciesMeta ?? {}).filter(([name, meta]) => meta.optional === true && THREAD_ENTRY_IMPORTS.has(name)).map(([name]) => name)
        : [];
      const forbidden = declared.filter((dep) => dep.startsWith("@compaction/") && !allowed.has(dep) && !optionalPeers.includes(dep));
      expect(forbidden).toEqual([]);
      if (Object.hasOwn(FRAMEWORK_INTEGRATIONS, workspace.name)) {
        expect(Object.keys(workspace.manifest.dependencies ?? {}).filter((dep) => THREAD_ENTRY_IMPORTS.has(dep) && dep !== ENGINE)).toEqual([]);
      }
    });

    if (Object.hasOwn(FRAMEWORK_INTEGRATIONS, workspace.name)) {
      it(`${workspace.name}'s main entry imports no thread-entry package (only ${THREAD_ENTRY_DIR} may)`, () => {
        const leaks = sourceFiles(workspace.dir)
          .filter((file) => !isTestFile(file) && !isThreadEntryFile(workspace, file))
          .flatMap((file) => importedPackages(readFileSync(file, "utf8")).filter((name) => name !== ENGINE && THREAD_ENTRY_IMPORTS.has(name)).map((name) => `${relative(ROOT, file)} imports ${name}`));
        expect(leaks).toEqual([]);
      });
    }
  }
});
