/**
 * The token count cache as a user meets it: a second run reads the counts the first kept, prints
 * the same, and a cache file that cannot be used changes nothing but a note on stderr.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendEntries } from "@compaction/transcript";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countCacheFile, NO_COUNT_CACHE_ENV } from "./count-cache.js";
import type { CliIo } from "./io.js";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const countsDir = (): string => join(sandbox.root, "home", ".cache", "compaction", "counts", "v1");
/** Doubles every count in the cache file `file`. */
function doubleCounts(file: string): void {
  const kept = JSON.parse(readFileSync(file, "utf8")) as { counters: Record<string, Record<string, number>> };
  for (const counts of Object.values(kept.counters)) for (const key of Object.keys(counts)) counts[key] = (counts[key] as number) * 2;
  writeFileSync(file, JSON.stringify(kept));
}
const after = (stdout: string): number => Number(/After\s+([\d,]+) tokens/.exec(stdout)?.[1]?.replace(/,/g, ""));

describe("the token count cache (the built binary)", () => {
  it("keeps the session's counts after a dry run, and the next run prints the same from them", () => {
    const first = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(first.code, first.stderr).toBe(0);
    expect(readdirSync(countsDir())).toHaveLength(1);
    const second = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toBe(first.stderr);

    // The counts it read are the file's: doubled there, the plan changes.
    doubleCounts(join(countsDir(), readdirSync(countsDir())[0] as string));
    const doubled = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(doubled.code).toBe(0);
    expect(after(doubled.stdout)).not.toBe(after(first.stdout));
  });

  it("starts a branch of the session (`session branch`, as pi's fork: its header names the session) from the counts the session kept", () => {
    const first = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(first.code, first.stderr).toBe(0);
    const io = { env: { HOME: join(sandbox.root, "home") } } as unknown as CliIo;
    const parentFile = countCacheFile(io, sandbox.sessionPath);
    const parentCounts = readFileSync(parentFile, "utf8");
    // The fork, as a user makes one: `session branch` at the last entry (a new file whose header names the session).
    const lines = readFileSync(sandbox.sessionPath, "utf8").trimEnd().split("\n");
    const last = (JSON.parse(lines.at(-1) as string) as { id: string }).id;
    const branch = sandbox.run(["session", "branch", "--at", last, "--json"]);
    expect(branch.code, branch.stderr).toBe(0);
    const fork = (JSON.parse(branch.stdout) as { path: string }).path;
    const forked = sandbox.run(["compact", "--dry-run", "--session", fork], { NO_COLOR: "1" });
    expect(forked.code, forked.stderr).toBe(0);
    expect(after(forked.stdout)).toBe(after(first.stdout));
    // The fork has its own file now, and the session's is as it was.
    expect(readFileSync(countCacheFile(io, fork), "utf8")).not.toBe("");
    expect(readFileSync(parentFile, "utf8")).toBe(parentCounts);

    // The counts the fork started from are the session's: doubled there, the fork's plan changes.
    rmSync(countCacheFile(io, fork));
    doubleCounts(parentFile);
    const doubled = sandbox.run(["compact", "--dry-run", "--session", fork], { NO_COLOR: "1" });
    expect(doubled.code, doubled.stderr).toBe(0);
    expect(after(doubled.stdout)).not.toBe(after(first.stdout));
  });

  it(`keeps nothing with ${NO_COUNT_CACHE_ENV}=1`, () => {
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1", [NO_COUNT_CACHE_ENV]: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(() => readdirSync(countsDir())).toThrow(/ENOENT/);
  });

  it("ignores a cut-off cache file with a note naming it, prints what it would without one, and mends the file", () => {
    const clean = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1", [NO_COUNT_CACHE_ENV]: "1" });
    const file = countCacheFile({ env: { HOME: join(sandbox.root, "home") } } as unknown as CliIo, sandbox.sessionPath);
    expect(sandbox.run(["compact", "--dry-run"]).code).toBe(0);
    writeFileSync(file, readFileSync(file, "utf8").slice(0, 500));
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(clean.stdout);
    expect(run.stderr).toMatch(new RegExp(`^compaction: note: ignored the token count cache ${escape(file)}: not valid JSON \\(.+\\); it is rebuilt\\.\\n$`));
    expect(() => JSON.parse(readFileSync(file, "utf8"))).not.toThrow();
    expect(sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" }).stderr).toBe("");
  });
});

/** Runs `main` in the sandbox's project: the exit code, the JSON it printed, and stderr. */
async function runJson(args: readonly string[], env: Record<string, string> = {}): Promise<{ readonly code: number | null; readonly report: unknown; readonly stderr: string }> {
  const { code, stdout, stderr } = await sandbox.runMain([...args, "--json"], env);
  // A plan, or the report of why there is none (a preset that finds nothing to cut exits 1).
  return { code, report: JSON.parse(stdout), stderr };
}

const PRESETS = ["safeguard", "layered", "sliding-window", "rolling"] as const;
const REAL = readdirSync(FIXTURES_DIR).filter((name) => name.endsWith(".jsonl"));

describe("the token count cache on every real transcript", () => {
  it.each(REAL)("%s: every preset's plan and inspect's figures are the same without the cache, with it cold and with it warm", { timeout: 120_000 }, async (name) => {
    const session = join(FIXTURES_DIR, name);
    for (const preset of PRESETS) {
      const args = ["compact", "--dry-run", "--session", session, "--preset", preset];
      const none = await runJson(args, { [NO_COUNT_CACHE_ENV]: "1" });
      rmSync(countsDir(), { recursive: true, force: true });
      const cold = await runJson(args);
      const warm = await runJson(args);
      expect(cold, `${preset}, cold`).toEqual(none);
      expect(warm, `${preset}, warm`).toEqual(none);
    }
    const inspect = ["context", "inspect", "--session", session];
    expect(await runJson(inspect)).toEqual(await runJson(inspect, { [NO_COUNT_CACHE_ENV]: "1" }));
  });

  it("counts what a session appended since the last run, and prints what a run without the cache prints", async () => {
    await runJson(["compact", "--dry-run"]);
    const entries = (): number => {
      const file = JSON.parse(readFileSync(join(countsDir(), readdirSync(countsDir())[0] as string), "utf8")) as { counters: Record<string, object> };
      return Object.values(file.counters).reduce((sum, counts) => sum + Object.keys(counts).length, 0);
    };
    const before = entries();
    const turn = (text: string) => [
      { type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: Date.now() } },
      { type: "message", message: { role: "assistant", content: [{ type: "text", text: `${text}: done. ${"a new line of detail\n".repeat(300)}` }], timestamp: Date.now() } },
    ];
    await appendEntries(sandbox.sessionPath, [...turn("add a changelog"), ...turn("tag the release")] as never);
    for (const preset of PRESETS) {
      const args = ["compact", "--dry-run", "--preset", preset];
      expect(await runJson(args), preset).toEqual(await runJson(args, { [NO_COUNT_CACHE_ENV]: "1" }));
    }
    // The new turns' texts were counted and kept beside the old ones.
    expect(entries()).toBeGreaterThanOrEqual(before + 4);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
