/**
 * The plugin docs/writing-plugins.md shows (`keepRecent`, marked `<!-- example: keep-recent-plugin -->`)
 * is what this test runs: written as a user's TypeScript plugin file next to a .compactionrc, it
 * wins selectCut over the preset's strategy, honours its option and writes the summary.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompactor } from "@compaction/core";
import { loadPiMessages } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PAGE = readFileSync(new URL("../docs/writing-plugins.md", import.meta.url), "utf8");
const MARKER = "<!-- example: keep-recent-plugin -->";

function exampleBlock(): string {
  const at = PAGE.indexOf(MARKER);
  if (at < 0) throw new Error(`docs/writing-plugins.md has no ${MARKER}`);
  const match = /```ts\n([\s\S]*?)```/.exec(PAGE.slice(at));
  if (!match?.[1]) throw new Error(`no ts block after ${MARKER}`);
  return match[1];
}

async function compactWith(pluginEntry: string) {
  const cwd = tmpProject({ ".compactionrc.yaml": `preset: safeguard\ncontextWindow: 200000\nplugins:\n  - ${pluginEntry}\n` });
  writeFileSync(join(cwd, "keep-recent.ts"), exampleBlock());
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
