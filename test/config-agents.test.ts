/**
 * A .compactionrc picks a preset for all agents and another per agent; a user's own plugin file
 * can tap selectCut and win over the preset's; two compactors run side by side.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompactor } from "@compaction/core";
import { builders } from "@compaction/core/testing";
import { loadPiMessages } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PAGE = readFileSync(new URL("../docs/configuration.md", import.meta.url), "utf8");

/** The code block that follows a marker comment in docs/configuration.md, so the page's example is what the test runs. */
function docBlock(marker: string): string {
  const at = PAGE.indexOf(marker);
  if (at < 0) throw new Error(`docs/configuration.md has no ${marker}`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(PAGE.slice(at));
  if (!match?.[1]) throw new Error(`no code block after ${marker}`);
  return match[1];
}

const b = builders("pi");
/** Tool outputs as long as real ones: the turns compacted are longer than their summary or note (a bigger context is refused). */
const conversation = () => [
  b.user("set up the repo"),
  b.assistant("cloning", [{ id: "c1", args: { command: "git clone x" } }]),
  ...b.toolResults([{ id: "c1", text: `Cloning into 'x'...\n${"remote: Counting objects: 100% (42/42), done.\n".repeat(30)}done` }]),
  b.assistant("cloned"),
  b.user("now run the tests"),
  b.assistant("running", [{ id: "c2", args: { command: "npm test" } }]),
  ...b.toolResults([{ id: "c2", text: `${"  ✓ parses a header line\n".repeat(40)}2 failed` }]),
  b.assistant("two tests fail"),
  b.user("fix them"),
  b.assistant("fixed both"),
];

describe(".compactionrc per agent", () => {
  it("uses the top-level preset by default and the agent's own preset for that agent (docs/configuration.md example)", async () => {
    const cwd = tmpProject({ ".compactionrc": docBlock("<!-- example: compactionrc-agents -->") });
    const fallback = await createCompactor({ cwd });
    const researcher = await createCompactor({ cwd, agent: "researcher" });
    const coder = await createCompactor({ cwd, agent: "coder" });
    const names = (c: typeof coder) => c.plugins.map((p) => p.name);
    expect(names(fallback)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
    expect(names(researcher)).toEqual(["summarizer-extractive", "rolling", "recall"]);
    expect(names(coder)).toEqual(["summarizer-extractive", "layered", "last-turn-injection"]);
    for (const c of [fallback, researcher, coder]) c.dispose();
  });

  it.each(["safeguard", "rolling", "layered", "sliding-window"])(
    "lets a user's own plugin file win selectCut over the %s preset, which still writes the summary or, for rolling, the eviction note (docs/configuration.md example)",
    async (preset) => {
      const cwd = tmpProject({
        ".compactionrc.yaml": `preset: ${preset}\ncontextWindow: 100000\nplugins:\n  - ./keep-last-turn.mjs\n`,
      });
      writeFileSync(join(cwd, "keep-last-turn.mjs"), docBlock("<!-- example: user-plugin -->"));
      const compactor = await createCompactor({ cwd });
      const input = conversation();
      const result = await compactor.compact({ messages: input });
      compactor.dispose();
      expect(result.status, result.reason ?? "").toBe("compacted");
      expect(result.cut?.selectedBy).toBe("keep-last-turn");
      expect(result.cut?.firstKeptIndex).toBe(8);
      expect(result.messages.slice(-2)).toEqual(input.slice(-2));
      if (preset !== "rolling") expect(result.summary).toContain("set up the repo");
      if (preset === "safeguard" || preset === "layered") expect(result.summary).toContain("## Last Exchange (Verbatim)");
      if (preset === "sliding-window") expect(result.summary?.startsWith("Previously:")).toBe(true);
      // The rolling preset includes recall: the cut messages are evicted behind a note naming the tool.
      if (preset === "rolling") {
        expect(result.summary).toMatch(/^\[Context rolled: 8 messages evicted \(\d+ tokens\)\. Full transcript available via memory_search\./);
        expect(result.warnings).toEqual([]);
      }
    },
  );

  it("runs two compactors with different presets side by side without sharing state", async () => {
    const messages = loadPiMessages("pi-large-session.jsonl");
    const rc = (preset: string) =>
      tmpProject({ ".compactionrc.json": JSON.stringify({ preset, contextWindow: 120_000, tokenizer: { counter: "estimate" } }) });
    const [a, b2] = await Promise.all([createCompactor({ cwd: rc("safeguard") }), createCompactor({ cwd: rc("sliding-window") })]);
    const [ra, rb] = await Promise.all([a.compact({ messages }), b2.compact({ messages })]);
    expect(ra.event?.strategy).toBe("safeguard");
    expect(rb.event?.strategy).toBe("sliding-window");
    expect(rb.summary?.startsWith("Previously:")).toBe(true);
    expect(ra.summary?.startsWith("Previously:")).toBe(false);
    expect(a.hooks.selectCut.taps.map((t) => t.name)).not.toContain("sliding-window");
    a.dispose();
    b2.dispose();
  });
});
