/**
 * `compact` beyond the plan (compact.test.ts): `--window`, an After over the window, an
 * incomplete last line set aside before writing, and a plugin that throws.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

describe("compaction compact", () => {
  it("compacts for --window when given, over the config's window, and the report says it came from the option", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 400000 }));
    const report = JSON.parse(sandbox.run(["compact", "--dry-run", "--json", "--window", "60000"]).stdout) as { contextWindow: number; contextWindowSource: string; tokensAfter: number; fitsWindow: boolean };
    expect(report).toMatchObject({ contextWindow: 60_000, contextWindowSource: "option", fitsWindow: true });
    expect(report.tokensAfter).toBeLessThan(60_000);
    const usage = sandbox.run(["compact", "--dry-run", "--window", "-5"], { NO_COLOR: "1" });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe("compaction: --window expects a whole number of at least 1, but got '-5'.\nhint: Pass the model's context window in tokens, e.g. --window 128000.\n");
  });

  describe("an After over the window (what it keeps unchanged does not fit a window this small)", () => {
    // A session file keeps what follows the summary unchanged: a newest reply of about 3,000
    // tokens cannot fit a 4,000-token window beside the summary, however the rest is compacted.
    beforeEach(() => {
      const lines = readFileSync(sandbox.sessionPath, "utf8").trimEnd().split("\n");
      const last = JSON.parse(lines.at(-1)!) as { id: string; message: Record<string, unknown>; timestamp: string };
      const text = Array.from({ length: 600 }, (_, i) => `line ${i}: the build output goes on`).join("\n");
      const reply = { ...last, id: "feedc0de", parentId: last.id, message: { ...last.message, content: [{ type: "text", text }] } };
      appendFileSync(sandbox.sessionPath, `${JSON.stringify(reply)}\n`);
    });

    it("a dry run says it would not fit, on the After line, in a warning and in its last line, and exits 1", () => {
      const run = sandbox.run(["compact", "--dry-run", "--window", "4000"], { NO_COLOR: "1" });
      expect(run.code).toBe(1);
      const after = Number(/^After +([\d,]+) tokens .*, over the 4,000-token window$/m.exec(run.stdout)?.[1]?.replace(/,/g, ""));
      expect(after).toBeGreaterThan(4_000);
      expect(run.stderr).toContain(`warning: After (${after.toLocaleString("en-US")} tokens) is over the context window (4,000 tokens): the compacted context does not fit it`);
      expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("Dry run: nothing written; After would not fit the 4,000-token window.");
      expect(run.stdout).not.toContain("Dry run: nothing written.\n");
      const report = JSON.parse(sandbox.run(["compact", "--dry-run", "--window", "4000", "--json"]).stdout) as { fitsWindow: boolean; tokensAfter: number };
      expect(report).toMatchObject({ fitsWindow: false, tokensAfter: after });
    });

    it("with --yes it still writes (the context is far smaller), with the warning, and exits 0", () => {
      const run = sandbox.run(["compact", "--yes", "--window", "4000"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain("is over the context window (4,000 tokens)");
      expect(run.stdout).toMatch(/^Compacted: wrote compaction entry \w+\.$/m);
    });
  });

  describe("an incomplete last line (a write cut short)", () => {
    const fragment = '{"type":"message","id":"deadbeef","parentId":"';
    const aside = () => `${sandbox.sessionPath}.incomplete`;

    it("is moved to <file>.incomplete before writing, and the output says so", () => {
      appendFileSync(sandbox.sessionPath, fragment);
      const run = sandbox.run(["compact", "--yes"], { NO_COLOR: "1" });
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(aside(), "utf8")).toBe(`${fragment}\n`);
      expect(run.stdout).toContain(
        `Set aside the incomplete last line (${fragment.length} bytes, a write cut short, never a whole entry) in ${aside()}; the session loads without it.\nCompacted: wrote compaction entry `,
      );
    });

    it("--json reports it as setAside {path, bytes}; null when there was none", () => {
      expect(JSON.parse(sandbox.run(["compact", "--dry-run", "--json"]).stdout)).toMatchObject({ setAside: null });
      appendFileSync(sandbox.sessionPath, fragment);
      expect(JSON.parse(sandbox.run(["compact", "--yes", "--json"]).stdout)).toMatchObject({ written: true, setAside: { path: aside(), bytes: fragment.length } });
    });
  });

  describe("a plugin that throws", () => {
    beforeEach(() => {
      sandbox.writeConfig("boom.mjs", 'export default () => ({ name: "boom", apply(c) { c.hooks.summarize.tapPromise("boom", async () => { throw new Error("boom"); }); } });\n');
      sandbox.writeConfig(".compactionrc.json", JSON.stringify({ plugins: ["./boom.mjs"] }));
    });

    it("is named with the hook it threw in; --verbose shows the stack of what it threw", () => {
      const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        "compaction: Nothing was compacted (failed): Plugin 'boom' failed in summarize: boom. Nothing was written.\nhint: The session was left as it is.\n(--verbose shows the stack of what plugin 'boom' threw in summarize)\n",
      );
      for (const argv of [["--verbose", "compact", "--dry-run"], ["compact", "--dry-run", "--verbose"]]) {
        const verbose = sandbox.run(argv, { NO_COLOR: "1" });
        expect(verbose.stderr).toMatch(/\nstack: Error: boom\n +at .*boom\.mjs:1:\d+/);
      }
    });

    it("--json carries the code, the plugin, the hook and the stack of what it threw", () => {
      const run = sandbox.run(["compact", "--dry-run", "--json"]);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as { error: { code: string; plugin: string; hook: string; cause: { message: string; stack: string } } };
      expect(report.error).toMatchObject({ code: "COMPACTION_PLUGIN_FAILED", message: "Plugin 'boom' failed in summarize: boom", plugin: "boom", hook: "summarize", cause: { message: "boom" } });
      expect(report.error.cause.stack).toMatch(/^Error: boom\n +at .*boom\.mjs:1:\d+/);
    });

    it("in apply, fails every command with the plugin and the hook apply, in --json too", () => {
      sandbox.writeConfig("boom.mjs", 'export default () => ({ name: "boom", apply() { throw new Error("bad apply"); } });\n');
      const run = sandbox.run(["context", "status", "--json"], { NO_COLOR: "1" });
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: "COMPACTION_PLUGIN_FAILED", plugin: "boom", hook: "apply", cause: { message: "bad apply" } } });
      expect(run.stderr).toBe("compaction: Plugin 'boom' failed in apply(): bad apply\n(--verbose shows the stack of what plugin 'boom' threw in apply)\n");
    });
  });
});
