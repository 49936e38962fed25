import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseSessionState, renderSessionSeed, sessionDirForCwd } from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAUDE_TRANSCRIPT, createSandbox, REAL_SESSION_ID, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const NO_COLOR = { NO_COLOR: "1" };

describe("compaction context export", () => {
  it("writes the session's state as a document the schema accepts, naming the source", () => {
    const file = join(sandbox.root, "state.json");
    const run = sandbox.run(["context", "export", file], NO_COLOR);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Exported: ${file}`);
    const state = parseSessionState(readFileSync(file, "utf8"), file);
    expect(state.source).toMatchObject({ session: REAL_SESSION_ID, path: sandbox.sessionPath, format: "pi", messages: 914 });
    expect(state.goal.length).toBeGreaterThan(0);
    expect(state.files.modified).toContain("packages/coding-agent/README.md");
    expect(state.toolOperations.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["bash", "edit", "read"]));
    expect(state.lastExchange.user).not.toBeNull();
  });

  it("prints the document on stdout for -", () => {
    const run = sandbox.run(["context", "export", "-"]);
    expect(run.code).toBe(0);
    expect(parseSessionState(run.stdout).source.session).toBe(REAL_SESSION_ID);
  });

  it("refuses to replace an existing file without --force: exit 1, file unchanged", () => {
    const file = join(sandbox.root, "state.json");
    writeFileSync(file, "keep me");
    const run = sandbox.run(["context", "export", file], NO_COLOR);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/already exists/);
    expect(readFileSync(file, "utf8")).toBe("keep me");
    expect(sandbox.run(["context", "export", file, "--force"]).code).toBe(0);
    expect(parseSessionState(readFileSync(file, "utf8")).format).toBe("compaction-session-state");
  });

  it("never replaces a transcript, not even the session itself with --force: exit 1, the session unchanged", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["context", "export", sandbox.sessionPath, "--force"], NO_COLOR);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("is a session transcript");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("refuses a target in a missing folder, or a directory, with exit 2 before any work", () => {
    const missing = sandbox.run(["context", "export", join(sandbox.root, "no", "such", "state.json")], NO_COLOR);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^compaction: Cannot export to .*: the folder .* does not exist\./);
    const folder = sandbox.run(["context", "export", sandbox.root, "--force"], NO_COLOR);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain("it is a directory");
  });

  it("exports a Claude Code transcript too, read through the Anthropic adapter", () => {
    const run = sandbox.run(["context", "export", "-", "--session", CLAUDE_TRANSCRIPT]);
    expect(run.code).toBe(0);
    const state = parseSessionState(run.stdout);
    expect(state.source.format).toBe("claude-code");
    expect(state.toolOperations.tools.length).toBeGreaterThan(0);
  });
});

describe("compaction context import", () => {
  it("creates a new version 3 session seeded with the state, which pi opens as one user message", () => {
    const file = join(sandbox.root, "state.json");
    expect(sandbox.run(["context", "export", file]).code).toBe(0);
    const before = sandbox.bytes();
    const run = sandbox.run(["context", "import", file, "--json"]);
    expect(run.code).toBe(0);
    const imported = JSON.parse(run.stdout) as { path: string; id: string; cwd: string };
    expect(dirname(imported.path)).toBe(sessionDirForCwd(sandbox.project, { sessionsDir: sandbox.sessionsDir }));
    expect(imported.id).not.toBe(REAL_SESSION_ID);
    expect(sandbox.bytes().equals(before)).toBe(true);
    const header = JSON.parse(readFileSync(imported.path, "utf8").split("\n")[0] as string) as Record<string, unknown>;
    expect(header).toMatchObject({ type: "session", version: 3, id: imported.id, cwd: sandbox.project });
    const pi = SessionManager.open(imported.path).buildSessionContext();
    expect(pi.messages).toHaveLength(1);
    const message = pi.messages[0] as { role: string; content: { type: string; text: string }[] };
    expect(message.role).toBe("user");
    expect(message.content[0]?.text).toBe(renderSessionSeed(parseSessionState(readFileSync(file, "utf8"))));
  });

  it("makes the new session the directory's most recent, so the next command without --session reads it", () => {
    const file = join(sandbox.root, "state.json");
    sandbox.run(["context", "export", file]);
    const imported = JSON.parse(sandbox.run(["context", "import", file, "--json"]).stdout) as { id: string };
    const status = JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as { session: { id: string }; messages: number; compactions: { count: number } };
    expect(status.session.id).toBe(imported.id);
    expect(status.messages).toBe(1);
    expect(status.compactions.count).toBe(0);
  });

  it("puts the session under another project with --cwd", () => {
    const file = join(sandbox.root, "state.json");
    sandbox.run(["context", "export", file]);
    const other = join(sandbox.root, "other-project");
    const imported = JSON.parse(sandbox.run(["context", "import", file, "--cwd", other, "--json"]).stdout) as { path: string; cwd: string };
    expect(imported.cwd).toBe(other);
    expect(readdirSync(sessionDirForCwd(other, { sessionsDir: sandbox.sessionsDir }))).toHaveLength(1);
  });

  it("refuses a document that fails the schema with exit 3, naming the JSON path, and creates nothing", () => {
    const file = join(sandbox.root, "state.json");
    sandbox.run(["context", "export", file]);
    const state = JSON.parse(readFileSync(file, "utf8")) as { goal: unknown };
    state.goal = "not a list";
    writeFileSync(file, JSON.stringify(state));
    const sessionsBefore = readdirSync(dirname(sandbox.sessionPath));
    const run = sandbox.run(["context", "import", file], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("/goal");
    expect(run.stderr).toContain(file);
    expect(readdirSync(dirname(sandbox.sessionPath))).toEqual(sessionsBefore);
  });

  it("says a transcript is not a session state, with the export to run first: exit 3", () => {
    const run = sandbox.run(["context", "import", sandbox.sessionPath], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("is a pi transcript, not a session state");
    expect(run.stderr).toMatch(/\nhint: Export it first: compaction context export state\.json --session /);
  });

  // Changed on purpose (issue 13): a missing file exits 3, as a missing session does, not 2 with a raw ENOENT.
  it("says a missing file does not exist with exit 3, in one line and a hint", () => {
    const run = sandbox.run(["context", "import", join(sandbox.root, "nope.json")], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toBe(
      `compaction: Cannot import ${join(sandbox.root, "nope.json")}: there is no such file.\nhint: Pass the path of a file written by 'compaction context export' (relative paths are read from the current directory).\n`,
    );
  });

  it("prints what it wrote as one JSON object with export --json", () => {
    const target = join(sandbox.project, "state.json");
    const run = sandbox.run(["context", "export", "state.json", "--json"], NO_COLOR);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { path: string; source: { session: string; format: string }; counts: Record<string, number> };
    expect(report.path).toBe(target);
    expect(report.source).toMatchObject({ session: "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", format: "pi" });
    const state = JSON.parse(readFileSync(target, "utf8")) as { decisions: unknown[]; identifiers: unknown[] };
    expect(report.counts).toMatchObject({ decisions: state.decisions.length, identifiers: state.identifiers.length });
  });

  it("counts one message as '1 message' in the plan of a session holding one", () => {
    expect(sandbox.run(["context", "export", "state.json"], NO_COLOR).code).toBe(0);
    const imported = JSON.parse(sandbox.run(["context", "import", "state.json", "--json"], NO_COLOR).stdout) as { path: string };
    const run = sandbox.run(["compact", "--dry-run", "--session", imported.path], NO_COLOR);
    expect(run.stdout).toMatch(/tokens \(1 message\)\n/);
  });
});
