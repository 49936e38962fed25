/**
 * The README's main command (`npm run demo`) runs two CLI commands on the session shipped in
 * examples/sessions; the output the README quotes must be what they print.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runNpx } from "./test-support/cli-sandbox.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Where the README's quoted output has the clone. */
const README_CLONE = "/home/me/compaction/";

/** The README's quoted demo transcript: `$ npx compaction …` lines and the output after each. */
function quotedRuns(): { args: string[]; output: string[] }[] {
  const readme = readFileSync(`${ROOT}README.md`, "utf8");
  const start = readme.indexOf("$ npx compaction context status --session examples/sessions/");
  expect(start).toBeGreaterThan(0);
  const block = readme.slice(start, readme.indexOf("```", start)).trimEnd().split("\n");
  const runs: { args: string[]; output: string[] }[] = [];
  for (const line of block) {
    if (line.startsWith("$ npx compaction ")) runs.push({ args: line.slice("$ npx compaction ".length).split(" "), output: [] });
    else runs.at(-1)?.output.push(line);
  }
  return runs;
}

// The count cache (count-cache.ts) goes here, not in the repository the test's HOME points at.
const CACHE = mkdtempSync(join(tmpdir(), "compaction-demo-cache-"));
afterAll(() => rmSync(CACHE, { recursive: true, force: true }));

describe("the README's demo", () => {
  it("is the npm run demo script", () => {
    const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const run of quotedRuns()) expect(scripts["demo"]).toContain(`npx compaction ${run.args.join(" ")}`);
  });

  it("is what examples/sessions/README.md gives to run on the shipped session", () => {
    const page = readFileSync(`${ROOT}examples/sessions/README.md`, "utf8");
    const commands = /<!-- run-by: cli\/src\/readme-demo\.test\.ts -->\n```sh\n([\s\S]*?)```/.exec(page)?.[1]?.trimEnd().split("\n");
    expect(commands).toEqual(quotedRuns().map((run) => `npx compaction ${run.args.join(" ")}`));
  });

  it.each(quotedRuns().map((run) => [run.args.slice(0, 2).join(" "), run] as const))("quotes what `compaction %s` prints", (_name, run) => {
    // As the README has it: npx in the clone, where npm ci linked the CLI into node_modules/.bin.
    // npm's cache and logs go to the test's folder, not to the HOME it is given.
    const result = runNpx(ROOT, run.args, { HOME: ROOT, XDG_CACHE_HOME: CACHE, npm_config_cache: join(CACHE, "npm"), NO_COLOR: "1", COMPACTION_SESSIONS_DIR: `${ROOT}.no-sessions` });
    expect(result.code, result.stderr).toBe(0);
    // What the terminal shows: stderr too (nothing, when all is well).
    expect(result.stderr).toBe("");
    // Paths differ per machine: the README shows the clone at /home/me/compaction, in full as the CLI prints them.
    const lines = result.stdout.trimEnd().split("\n").map((line) => line.replaceAll(ROOT, README_CLONE));
    expect(lines).toEqual(run.output);
  });
});
