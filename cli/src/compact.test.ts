import { appendEntries, buildContext, readSession } from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

describe("compaction compact", () => {
  it("shows before and after token counts and what it compacts with --dry-run", () => {
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Before\s+177,657 tokens \(914 messages\)/);
    expect(run.stdout).toMatch(/After\s+[\d,]+ tokens \(\d+ messages/);
    expect(run.stdout).toMatch(/Compacts\s+\d+ messages, by safeguard/);
    expect(run.stdout).toContain("Dry run: nothing written.");
  });

  it("says which measure the token figures of its warnings are in, and the After it prints is within the window less the reserve", () => {
    // A window whose budget binds: safeguard lowers keepRecentTokens and says so in our count.
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ preset: "safeguard", contextWindow: 30_000 }));
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: \[safeguard\] keepRecentTokens \(20000 in the provider's measure, \d+ in our count\) was lowered to \d+ for this run, .* in the budget of \d+ tokens\./);
    expect(run.stderr).toMatch(/\nnote: the token figures in this warning are our o200k count; the provider counts 1\.\d\dx that on this session\. Before and After are in the provider's measure \(see Measure\)\.\n/);
    const after = Number(/After\s+([\d,]+) tokens/.exec(run.stdout)?.[1]?.replace(/,/g, ""));
    expect(after).toBeGreaterThan(5_000);
    // The window's own reserve: an eighth of 30,000.
    expect(after).toBeLessThanOrEqual(30_000 - 3_750);
  });

  it("adds no note on the measure when no warning gives a number of tokens", () => {
    // layered's full compaction on this window warns, with no token figure in the warning (its
    // summarizeProtectTokens small enough that keeping within the run's target does not lower it,
    // which warns with figures).
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ preset: "layered", contextWindow: 30_000, options: { layered: { summarizeProtectTokens: 1_000 } } }));
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("warning: [layered] full compaction");
    expect(run.stderr).not.toContain("note:");
  });

  it("writes nothing with --dry-run", () => {
    const before = sandbox.bytes();
    expect(sandbox.run(["compact", "--dry-run", "--yes"]).code).toBe(0);
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("refuses without a terminal and without --yes: exit 1, a hint to pass --yes, file unchanged", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["compact"], { NO_COLOR: "1" });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^compaction: Not writing the compaction: stdin is not a terminal/);
    expect(run.stderr).toMatch(/\nhint: Pass --yes/);
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("appends one compaction entry with --yes, keeping the file's earlier bytes", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["compact", "--yes", "--focus", "the session manager"]);
    expect(run.code).toBe(0);
    const after = sandbox.bytes();
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const added = after.subarray(before.length).toString("utf8").trimEnd().split("\n");
    expect(added).toHaveLength(1);
    const entry = JSON.parse(added[0] as string) as Record<string, unknown>;
    expect(entry).toMatchObject({ type: "compaction", tokensBefore: 177657, details: { customInstruction: "the session manager", trigger: "manual" } });
    expect(run.stdout).toContain(`wrote compaction entry ${String(entry["id"])}`);
  });

  it("writes a file whose context pi's SessionManager builds exactly as ours", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const ours = buildContext(readSession(sandbox.sessionPath).entries);
    const pi = SessionManager.open(sandbox.sessionPath).buildSessionContext();
    expect(ours.compaction).not.toBeNull();
    expect(ours.messages.length).toBeLessThan(914);
    expect(pi.messages).toEqual(ours.messages);
  });

  it("says there is nothing new to compact right after a compaction: exit 1, file unchanged", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const before = sandbox.bytes();
    const again = sandbox.run(["compact", "--yes"], { NO_COLOR: "1" });
    expect(again.code).toBe(1);
    expect(again.stderr + again.stdout).toContain("Nothing new to compact");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("runs the preset given with --preset instead of the configured one", () => {
    const run = sandbox.run(["compact", "--dry-run", "--preset", "sliding-window"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Compacts\s+\d+ messages, by sliding-window/);
  });

  it("compacts an already compacted session again once it has grown, keeping pi's context equal to ours", async () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const turn = (text: string) => [
      { type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: Date.now() } },
      {
        type: "message",
        message: { role: "assistant", content: [{ type: "text", text: `${text} — done. ${"detail ".repeat(4000)}` }], timestamp: Date.now() },
      },
    ];
    await appendEntries(sandbox.sessionPath, [...turn("add a changelog"), ...turn("bump the version"), ...turn("tag the release")] as never);
    const second = sandbox.run(["compact", "--yes"], { NO_COLOR: "1" });
    const ours = buildContext(readSession(sandbox.sessionPath).entries);
    const pi = SessionManager.open(sandbox.sessionPath).buildSessionContext();
    expect(second.code).toBe(0);
    expect(ours.branch.filter((entry) => entry.type === "compaction")).toHaveLength(2);
    expect(pi.messages).toEqual(ours.messages);
  });

  it("prints the plan as one JSON object with --dry-run --json, writing nothing", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["compact", "--dry-run", "--json", "--focus", "tests"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      session: { path: sandbox.sessionPath, format: "pi" },
      dryRun: true,
      status: "compacted",
      written: false,
      entryId: null,
      tokensBefore: 177657,
      messagesBefore: 914,
      strategy: "safeguard",
      focus: "tests",
    });
    expect(report["tokensAfter"]).toBeLessThan(177657);
    expect(typeof report["firstKeptEntryId"]).toBe("string");
    expect(report["summary"]).toContain("## Goal");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("says the ratio After is at: Before over our count of the messages before (Claude's figures, about 1.29 on this session)", () => {
    const json = JSON.parse(sandbox.run(["compact", "--dry-run", "--json"]).stdout) as { afterRatio: number; tokensBefore: number; tokensAfter: number };
    expect(json.afterRatio).toBeGreaterThan(1.25);
    expect(json.afterRatio).toBeLessThan(1.35);
    const text = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" }).stdout;
    expect(text).toContain(`; After: o200k x${json.afterRatio.toFixed(2)} (Before over our count of the 914 messages before)`);
    // The newest usage figure covers every message: Before counts nothing, so no calibration is shown for it.
    expect(text).toMatch(/Measure {3}provider's: usage figure of the newest message \(nothing after it to count\); After/);
  });

  it("reports the entry it wrote with --yes --json", () => {
    const run = sandbox.run(["compact", "--yes", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    const last = JSON.parse(sandbox.bytes().toString("utf8").trimEnd().split("\n").at(-1) as string) as Record<string, unknown>;
    expect(report).toMatchObject({ written: true, entryId: last["id"], firstKeptEntryId: last["firstKeptEntryId"] });
  });

  it.each([["--dry-run"], ["--yes"]])("asks the compactor for a summary and an unchanged suffix only (suffixOnly) with %s", (flag) => {
    sandbox.writeConfig(
      "suffix-spy.mjs",
      'export default () => ({ name: "suffix-spy", apply(c) { c.hooks.beforeCompact.tap("suffix-spy", (run) => run.cancel(`suffixOnly is ${run.suffixOnly}`)); } });\n',
    );
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ plugins: ["./suffix-spy.mjs"] }));
    const before = sandbox.bytes();
    const run = sandbox.run(["compact", flag], { NO_COLOR: "1" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Nothing was compacted (cancelled): Cancelled by plugin 'suffix-spy': suffixOnly is true.");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("prints a JSON report with the reason and exits 1 when there is nothing to compact", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const run = sandbox.run(["compact", "--yes", "--json"], { NO_COLOR: "1" });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ status: "noop", written: false });
    expect(String(report["reason"])).toContain("Nothing new to compact");
    expect(run.stderr).toMatch(/^compaction: Nothing was compacted \(noop\)/);
  });
});
