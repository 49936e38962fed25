import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { openClawAgentDatabase } from "@compaction/transcript";
import { writeOpenClawDatabase } from "@compaction/transcript/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
let stateDir: string;
let database: string;
const KEY = "agent:coder:main";

/** OpenClaw's state dir in the sandbox: agent `coder`'s database holding the sandbox's (real, version 3) session. */
beforeEach(async () => {
  sandbox = await createSandbox();
  stateDir = join(sandbox.root, "openclaw-state");
  database = openClawAgentDatabase("coder", { stateDir });
  const lines = readFileSync(sandbox.sessionPath, "utf8").split("\n").filter((line) => line !== "");
  writeOpenClawDatabase(database, [{ key: KEY, id: "oc-session", lines }]);
});
afterEach(() => sandbox.remove());

describe("the CLI on OpenClaw's SQLite sessions", () => {
  const env = () => ({ NO_COLOR: "1", OPENCLAW_STATE_DIR: stateDir });

  it("context status reads a session by key and by agent, with the same numbers as the pi file", () => {
    const fromFile = JSON.parse(sandbox.run(["context", "status", "--json", "--session", sandbox.sessionPath]).stdout);
    for (const target of [KEY, "openclaw:coder", database]) {
      const run = sandbox.run(["context", "status", "--json", "--session", target], env());
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`OpenClaw session ${KEY}`);
      const status = JSON.parse(run.stdout);
      expect(status.messages).toBe(fromFile.messages);
      expect(status.tokens).toBe(fromFile.tokens);
    }
  });

  it("writes its snapshot of the conversation readable by the user alone", () => {
    const run = sandbox.run(["context", "status", "--session", KEY], env());
    expect(run.code, run.stderr).toBe(0);
    const snapshot = /snapshot ([^)]+)\)/.exec(run.stderr)?.[1] as string;
    expect(statSync(snapshot).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(snapshot)).mode & 0o777).toBe(0o700);
  });

  it("inspect, history, export and search work on it, and OpenClaw's database is never written", () => {
    const before = readFileSync(database);
    expect(sandbox.run(["context", "inspect", "--session", KEY], env()).code).toBe(0);
    const history = sandbox.run(["context", "history", "--json", "--session", KEY], env());
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual([]);
    const exported = sandbox.run(["context", "export", join(sandbox.root, "state.json"), "--session", KEY], env());
    expect(exported.code, exported.stderr).toBe(0);
    const search = sandbox.run(["search", "--json", "--session", KEY, "theme"], env());
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).results.length).toBeGreaterThan(0);
    expect(readFileSync(database).equals(before)).toBe(true);
  });

  it("refuses to write a compaction or a setting to it, saying why", () => {
    const compact = sandbox.run(["compact", "--yes", "--session", KEY], env());
    expect(compact.code).not.toBe(0);
    expect(compact.stderr).toMatch(/only reads .*OpenClaw/s);
    const setting = sandbox.run(["autocompact", "off", "--session", KEY], env());
    expect(setting.code).not.toBe(0);
    expect(setting.stderr).toMatch(/Cannot set auto-compaction/);
  });

  it("names the agents there when an agent id is unknown", () => {
    const run = sandbox.run(["context", "status", "--session", "openclaw:nobody"], env());
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/agents there: coder/);
  });

  it("anchors status on the After of a compaction entry of ours in the transcript, as on a pi file", () => {
    const compacted = sandbox.run(["compact", "--yes", "--json", "--session", sandbox.sessionPath]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const after = (JSON.parse(compacted.stdout) as { tokensAfter: number }).tokensAfter;
    const lines = readFileSync(sandbox.sessionPath, "utf8").split("\n").filter((line) => line !== "");
    const anchoredKey = "agent:anchored:main";
    writeOpenClawDatabase(openClawAgentDatabase("anchored", { stateDir }), [{ key: anchoredKey, id: "oc-anchored", lines }]);
    const run = sandbox.run(["context", "status", "--json", "--session", anchoredKey], env());
    expect(run.code, run.stderr).toBe(0);
    const status = JSON.parse(run.stdout) as { tokens: number; measure: { base: string } };
    expect(status.tokens).toBe(after);
    expect(status.measure.base).toBe("compaction");
  });
});
