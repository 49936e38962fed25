/**
 * `compact --preset rolling` on a pi session: rolling's eviction note tells the agent to use
 * `memory_search`, which only the @compaction/pi extension gives a pi agent. The CLI says where
 * the tool comes from before writing, and when nothing gives it, runs rolling's no-recall
 * fallback (a summary, nothing evicted) instead of writing a note about a tool the agent lacks.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, giveAgentRecall, type Sandbox } from "./test-support/cli-sandbox.js";

interface Report {
  written: boolean;
  summary: string;
  warnings: string[];
  recallTool: { tool: string; givenBy: string | null; assertedByConfig: boolean; fallback: boolean } | null;
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const compactRolling = (...args: string[]) => {
  const run = sandbox.run(["compact", "--preset", "rolling", "--json", ...args], { NO_COLOR: "1" });
  return { ...run, report: JSON.parse(run.stdout) as Report };
};

describe("compaction compact --preset rolling", () => {
  it("runs the no-recall fallback when nothing gives the agent memory_search, saying so before writing", () => {
    const { code, stderr, report } = compactRolling("--yes");
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: nothing gives this session's agent memory_search .* running rolling's no-recall fallback instead/);
    expect(report.recallTool).toEqual({ tool: "memory_search", givenBy: null, assertedByConfig: false, fallback: true });
    expect(report.written).toBe(true);
    expect(report.summary).not.toContain("memory_search");
  });

  it("evicts with a note naming memory_search when pi loads @compaction/pi from the user's extensions", () => {
    const file = giveAgentRecall(sandbox);
    const { code, stderr, report } = compactRolling("--dry-run");
    expect(code).toBe(0);
    expect(stderr).toContain(`note: the eviction note tells the agent to use memory_search; ${file} loads @compaction/pi`);
    expect(report.recallTool).toEqual({ tool: "memory_search", givenBy: file, assertedByConfig: false, fallback: false });
    expect(report.summary).toContain("memory_search");
  });

  it("finds the extension listed in the project's .pi/settings.json", () => {
    const project = join(sandbox.root, "pi-project");
    mkdirSync(join(project, ".pi"), { recursive: true });
    writeFileSync(join(project, ".pi", "settings.json"), JSON.stringify({ packages: ["npm:@compaction/pi"] }));
    // The session's header names the project it ran in; rewrite it to point at this one.
    const [header, ...rest] = sandbox.bytes().toString("utf8").split("\n");
    writeFileSync(sandbox.sessionPath, [JSON.stringify({ ...(JSON.parse(header as string) as object), cwd: project }), ...rest].join("\n"));
    const { report } = compactRolling("--dry-run");
    expect(report.recallTool).toMatchObject({ givenBy: join(project, ".pi", "settings.json"), fallback: false });
  });

  it("trusts a config that says the host offers the tool itself (rolling recall: true)", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ options: { rolling: { recall: true } } }));
    const { stderr, report } = compactRolling("--dry-run");
    expect(stderr).toContain("which the config says the host offers itself");
    expect(report.recallTool).toMatchObject({ givenBy: null, assertedByConfig: true, fallback: false });
    expect(report.summary).toContain("memory_search");
  });

  it("says nothing about recall for a preset without it", () => {
    const run = sandbox.run(["compact", "--dry-run", "--json"], { NO_COLOR: "1" });
    expect((JSON.parse(run.stdout) as Report).recallTool).toBeNull();
    expect(run.stderr).not.toContain("memory_search");
  });
});
