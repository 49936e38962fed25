/**
 * docs/writing-plugins.md, run as a reader follows it:
 * - the `keepRecent` plugin (`<!-- example: keep-recent-plugin -->`), written as a user's
 *   TypeScript plugin file next to a .compactionrc, wins selectCut over the preset's strategy,
 *   honours its option and writes the summary;
 * - "Using it": the page's shell blocks run as printed (a folder of its own in a copy of the
 *   clone's layout, `npx compaction …` there), and what they print is what the page quotes;
 * - "Changing what is sent": the `beforeCompact` pruning tap fails on a pi session file with the
 *   error the page quotes, and the `shapeRequest` plugin and the program that shows it print what
 *   the page quotes.
 */
import { execFile } from "node:child_process";
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createCompactor } from "@compaction/core";
import { loadPiMessages } from "@compaction/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, type CodeBlock } from "./support/markdown.js";
import { tmpProject } from "./support/tmp-project.js";

const PAGE_PATH = fileURLToPath(new URL("../docs/writing-plugins.md", import.meta.url));
const SHIPPED = fileURLToPath(new URL("../examples/sessions/pi-large-session.jsonl", import.meta.url));
const RUN_BY = "<!-- run-by: test/docs-plugin-example.test.ts -->";
/** Where the page's quoted output has the clone. */
const CLONE = "/home/me/compaction";

/** The page's blocks this test takes, by the marker on the line before each. */
const EXAMPLES = {
  "keep-recent-plugin": "<!-- example: keep-recent-plugin -->",
  "keep-recent-compactionrc": "<!-- example: keep-recent-compactionrc -->",
  "prune-in-before-compact": "<!-- example: prune-in-before-compact -->",
  "prune-outputs-plugin": "<!-- example: prune-outputs-plugin -->",
} as const;

/** The body of the block right after the example's marker. */
function example(name: keyof typeof EXAMPLES): string {
  const block = codeBlocks(PAGE_PATH).find((b) => b.before === EXAMPLES[name]);
  if (!block) throw new Error(`docs/writing-plugins.md has no block marked ${EXAMPLES[name]}`);
  return `${block.body}\n`;
}

/** The page's block marked run-by this test whose body starts with `start`. */
function runBlock(start: string, lang?: string): CodeBlock {
  const block = codeBlocks(PAGE_PATH).find((b) => b.before === RUN_BY && b.body.startsWith(start) && (lang === undefined || b.lang === lang));
  if (!block) throw new Error(`docs/writing-plugins.md has no block marked ${RUN_BY} starting with ${JSON.stringify(start)}`);
  return block;
}

/** A quoted run: the command after "$ " on its first line, and the output after it. */
function quoted(command: string): { command: string; output: string } {
  const block = runBlock(`$ ${command}`, "");
  const [first, ...rest] = block.body.split("\n");
  return { command: (first as string).slice(2), output: rest.join("\n") };
}

async function sh(command: string, cwd: string): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)("bash", ["-c", command], { cwd, env: { ...process.env, NO_COLOR: "1" } });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

async function compactWith(pluginEntry: string) {
  const cwd = tmpProject({ ".compactionrc.yaml": `preset: safeguard\ncontextWindow: 200000\nplugins:\n  - ${pluginEntry}\n` });
  writeFileSync(join(cwd, "keep-recent.ts"), example("keep-recent-plugin"));
  const compactor = await createCompactor({ cwd });
  try {
    return await compactor.compact({ messages: loadPiMessages("pi-large-session.jsonl"), trigger: "manual" });
  } finally {
    compactor.dispose();
  }
}

describe("docs/writing-plugins.md's keepRecent plugin", () => {
  it("loads from a .ts file, selects the cut over the safeguard preset and writes a summary", async () => {
    const result = await compactWith("./keep-recent.ts");
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.cut?.selectedBy).toBe("keep-recent");
    expect(result.summary?.trim().length).toBeGreaterThan(0);
  });

  it("keeps fewer messages with a smaller keepRecentTokens", async () => {
    const byDefault = await compactWith("./keep-recent.ts");
    const smaller = await compactWith("[./keep-recent.ts, { keepRecentTokens: 5000 }]");
    expect(smaller.cut?.selectedBy).toBe("keep-recent");
    expect(smaller.cut?.firstKeptIndex).toBeGreaterThan(byDefault.cut?.firstKeptIndex ?? Infinity);
  });
});

describe("docs/writing-plugins.md, followed in a clone's layout", () => {
  // The clone: its shipped session at examples/sessions/, and the reader's folder beside it.
  let clone: string;
  let folder: string;
  beforeAll(async () => {
    const scratch = fileURLToPath(new URL(".tmp/", import.meta.url));
    mkdirSync(scratch, { recursive: true });
    clone = mkdtempSync(join(scratch, "plugin-page-"));
    mkdirSync(join(clone, "examples", "sessions"), { recursive: true });
    copyFileSync(SHIPPED, join(clone, "examples", "sessions", "pi-large-session.jsonl"));
    const setup = await sh(runBlock("mkdir my-plugin", "sh").body, clone);
    expect(setup, setup.stderr).toMatchObject({ code: 0 });
    folder = join(clone, "my-plugin");
    writeFileSync(join(folder, "keep-recent.ts"), example("keep-recent-plugin"));
    writeFileSync(join(folder, ".compactionrc.yaml"), example("keep-recent-compactionrc"));
  });
  afterAll(() => rmSync(clone, { recursive: true, force: true }));

  /** The page's three commands, in order, each run as printed. */
  const commands = () => runBlock("npx compaction config", "sh").body.split("\n").filter((line) => line.trim() !== "");

  it("prints the taps the page quotes, the plugin's first", async () => {
    const [config] = commands();
    const { command, output } = quoted("npx compaction config");
    expect(command).toBe(config);
    const run = await sh(config as string, folder);
    expect(run.code, run.stderr).toBe(0);
    const [, tail = ""] = output.split("…\n");
    expect(tail).toMatch(/^Taps, in the order they run:/);
    expect(run.stdout.endsWith(`${tail}\n`), run.stdout).toBe(true);
    expect(run.stdout).toContain("keepRecentTokens  10000  file /plugins/0/1/keepRecentTokens");
  });

  it("dry-runs the compaction the page quotes, figure for figure, by the plugin", async () => {
    const [, dryRun] = commands();
    const { command, output } = quoted("npx compaction compact --dry-run --session");
    expect(command).toBe(dryRun);
    const run = await sh(dryRun as string, folder);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.replaceAll(clone, CLONE)).toBe(`${output}\n`);
  });

  it("prints, with --json, the plugin's cut and the summary", async () => {
    const [, dryRun, json] = commands();
    expect(json).toBe((dryRun as string).replace("--dry-run", "--dry-run --json"));
    const run = await sh(json as string, folder);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { status: string; strategy: string; summary: string; tokensAfter: number; dryRun: boolean };
    expect(report).toMatchObject({ status: "compacted", strategy: "keep-recent", dryRun: true });
    expect(report.summary).toMatch(/^## Goal/);
    expect(quoted("npx compaction compact --dry-run --session").output).toContain(`After     ${report.tokensAfter.toLocaleString("en-US")} tokens`);
  });

  it("fails the beforeCompact pruning tap on a pi session file with the error the page quotes", async () => {
    const project = join(clone, "prune-before-compact");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{ "private": true, "type": "module" }\n');
    writeFileSync(
      join(project, "prune-outputs.ts"),
      `import { STAGE_PRUNE, type CompactionPlugin } from "@compaction/core";\n\nexport default function pruneOutputs(): CompactionPlugin {\n  return {\n    name: "prune-outputs",\n    apply(compactor) {\n${example("prune-in-before-compact")}    },\n  };\n}\n`,
    );
    writeFileSync(join(project, ".compactionrc.yaml"), "preset: safeguard\nplugins:\n  - ./prune-outputs.ts\n");
    const { command, output } = quoted("npx compaction compact --dry-run --session ../examples/sessions/pi-large-session.jsonl\n…");
    const run = await sh(command, project);
    expect(run.code).toBe(1);
    const [, error = ""] = output.split("…\n");
    expect(run.stderr).toBe(`${error}\n`);
  });

  it("sends the request the page quotes through the shapeRequest plugin, listed under shapeRequest", async () => {
    writeFileSync(join(folder, "prune-outputs.ts"), example("prune-outputs-plugin"));
    appendFileSync(join(folder, ".compactionrc.yaml"), "  - ./prune-outputs.ts\n");
    writeFileSync(join(folder, "shape.mjs"), `${runBlock("// shape.mjs", "js").body}\n`);
    const { command, output } = quoted("node shape.mjs");
    const run = await sh(command, folder);
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(`${output}\n`);
    const config = await sh(commands()[0] as string, folder);
    expect(config.stdout).toMatch(/^ {2}shapeRequest {2}prune-outputs \(-100\)$/m);
    // The transcript is untouched: the dry run still compacts the whole outputs.
    const dryRun = await sh(commands()[1] as string, folder);
    expect(dryRun.stdout.replaceAll(clone, CLONE)).toBe(`${quoted("npx compaction compact --dry-run --session").output}\n`);
  });
});
