import { buildContext, readSession } from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const NO_COLOR = { NO_COLOR: "1" };
const json = (args: string[]) => JSON.parse(sandbox.run([...args, "--json"]).stdout) as Record<string, unknown>;

describe("compaction autocompact", () => {
  it("shows the config's setting when the session has none: on at the preset's threshold, from the config", () => {
    const run = sandbox.run(["autocompact"], NO_COLOR);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Auto-compaction on at 80% of the window \(160,000 tokens\), preset safeguard, from the config\./);
  });

  it("turns it off for the session by appending one pi custom entry, and status then shows it off", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["autocompact", "off"], NO_COLOR);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Set: auto-compaction off .* set for this session \(the config says on\)\./);
    const after = sandbox.bytes();
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const added = after.subarray(before.length).toString("utf8").trimEnd().split("\n");
    expect(added).toHaveLength(1);
    expect(JSON.parse(added[0] as string)).toMatchObject({ type: "custom", customType: "compaction.autoCompact", data: { enabled: false } });
    expect(sandbox.run(["context", "status"], NO_COLOR).stdout).toMatch(/Auto-compaction\s+off \(threshold 80%\), set for this session/);
    expect(json(["context", "status"])).toMatchObject({ autoCompact: { enabled: false, source: "session" } });
  });

  it("writes nothing when the session already has the requested setting", () => {
    expect(sandbox.run(["autocompact", "off"]).code).toBe(0);
    const before = sandbox.bytes();
    const again = sandbox.run(["autocompact", "off"], NO_COLOR);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("(already set; nothing written)");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("turns it back on, the latest setting winning", () => {
    sandbox.run(["autocompact", "off"]);
    expect(json(["autocompact", "on"])).toMatchObject({ enabled: true, source: "session", changed: true });
    expect(json(["autocompact"])).toMatchObject({ enabled: true, source: "session", changed: false, configEnabled: true });
  });

  it("keeps the session's setting over a config that turns auto-compaction off", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ autoCompact: { enabled: false } }));
    expect(json(["autocompact"])).toMatchObject({ enabled: false, source: "config", configEnabled: false });
    sandbox.run(["autocompact", "on"]);
    expect(json(["autocompact"])).toMatchObject({ enabled: true, source: "session", configEnabled: false });
  });

  it("leaves the context pi builds unchanged (pi skips custom entries)", () => {
    const piBefore = SessionManager.open(sandbox.sessionPath).buildSessionContext().messages;
    expect(sandbox.run(["autocompact", "off"]).code).toBe(0);
    const pi = SessionManager.open(sandbox.sessionPath).buildSessionContext().messages;
    expect(pi).toEqual(piBefore);
    expect(buildContext(readSession(sandbox.sessionPath).entries).messages).toEqual(pi);
  });

  it("rejects anything but on or off with exit 2, writing nothing", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["autocompact", "maybe"], NO_COLOR);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^compaction: autocompact expects 'on' or 'off', but got 'maybe'\./);
    expect(sandbox.bytes().equals(before)).toBe(true);
  });
});
