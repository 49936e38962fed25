import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

describe("errors and exit codes", () => {
  it("exits 3 with one error line and a hint for an unknown session id", () => {
    const run = sandbox.run(["context", "status", "--session", "0000dead"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^compaction: No session with id "0000dead"/);
    expect(lines[1]).toMatch(/^hint: /);
    expect(run.stdout).toBe("");
  });

  it("exits 3 when the project has no session and none is named", () => {
    const run = sandbox.run(["context", "status", "--sessions-dir", sandbox.root + "/elsewhere"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^compaction: No session file for /);
  });

  it("exits 4 with the config problem for an invalid .compactionrc", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: "big" }));
    const run = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^compaction: Invalid compaction config .*\.compactionrc\.json: \/contextWindow/);
    const [message, hint, ...rest] = run.stderr.trimEnd().split("\n");
    expect(hint).toMatch(/^hint: /);
    expect(rest).toEqual([]);
    // The hint is said once, after the message, not inside it too.
    expect(message).not.toContain((hint as string).slice("hint: ".length));
  });

  it("says a preset is not found in one line, with the nearest name and what was tried in the hint", () => {
    const run = sandbox.run(["compact", "--dry-run", "--preset", "rollin"], { NO_COLOR: "1" });
    expect(run.code).toBe(4);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    // --preset names it, not the config file: the message does not point into a file.
    expect(lines[0]).toBe("compaction: Cannot find preset 'rollin' (named by --preset).");
    expect(lines[1]).toMatch(/^hint: Did you mean 'rolling'\? .* Tried: @compaction\/preset-rollin from /);
  });

  it("exits 2 for an unknown option, naming it", () => {
    const run = sandbox.run(["context", "status", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("compaction: unknown option '--bogus'");
  });

  it("exits 2 for an unknown command", () => {
    expect(sandbox.run(["frobnicate"]).code).toBe(2);
  });

  it("exits 3 on a corrupt line, and reads past it with --skip-corrupt, reporting the line on stderr", () => {
    appendFileSync(sandbox.sessionPath, "{not json\n");
    appendFileSync(sandbox.sessionPath, JSON.stringify({ type: "label", id: "zz000001", parentId: null, timestamp: new Date().toISOString(), targetId: "x", label: "y" }) + "\n");
    const failed = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(failed.code).toBe(3);
    const skipped = sandbox.run(["--skip-corrupt", "context", "status", "--json"], { NO_COLOR: "1" });
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/^compaction: skipped line 1020 of .*: /);
  });

  it("refuses to write when a skipped line breaks the branch, which would lose every entry before it", () => {
    const lines = readFileSync(sandbox.sessionPath, "utf8").split("\n");
    lines[599] = (lines[599] ?? "").slice(0, 40); // cut line 600 short: its entry is lost, the chain breaks there
    writeFileSync(sandbox.sessionPath, lines.join("\n"));
    const before = sandbox.bytes();
    const compact = sandbox.run(["--skip-corrupt", "compact", "--yes"], { NO_COLOR: "1" });
    expect(compact.code).toBe(3);
    expect(compact.stderr).toMatch(/The branch breaks at a skipped line \(line 600 of .*\): \d+ earlier entries cannot be reached, so nothing was written\./);
    const branch = sandbox.run(["--skip-corrupt", "session", "branch", "--at", "l00001019"], { NO_COLOR: "1" });
    expect(branch.code).toBe(3);
    expect(branch.stderr).toContain("The branch breaks at a skipped line");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("names the --skip-corrupt flag (not the library option) in the hint for a corrupt line", () => {
    appendFileSync(sandbox.sessionPath, "{not json\n");
    const run = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/\nhint: Pass --skip-corrupt to read past it/);
    expect(run.stderr).not.toContain("skipCorrupt");
  });

  it("names the command that met the corrupt line in the hint, so the line it gives does what was asked", () => {
    appendFileSync(sandbox.sessionPath, "{not json\n");
    const compare = sandbox.run(["compare", "--presets", "safeguard"], { NO_COLOR: "1" });
    expect(compare.code).toBe(3);
    expect(compare.stderr).toMatch(/\nhint: Pass --skip-corrupt to read past it \((npx )?compaction compare … --skip-corrupt\); the file is not changed\./);
    const history = sandbox.run(["context", "history", "--json"], { NO_COLOR: "1" });
    expect(history.code).toBe(3);
    expect((JSON.parse(history.stdout) as { error: { hint: string } }).error.hint).toMatch(/\((npx )?compaction context history … --skip-corrupt\)/);
    const skipped = sandbox.run(["compare", "--presets", "safeguard", "--skip-corrupt"], { NO_COLOR: "1" });
    expect(skipped.code).toBe(0);
  });

  it("search exits 3 on a corrupt line like every other command; with --skip-corrupt it warns what the break leaves out", () => {
    const lines = readFileSync(sandbox.sessionPath, "utf8").split("\n");
    lines[499] = (lines[499] ?? "").slice(0, 40); // line 500 cut short: the chain breaks there
    writeFileSync(sandbox.sessionPath, lines.join("\n"));
    const failed = sandbox.run(["search", "user-message-selector.ts"], { NO_COLOR: "1" });
    expect(failed.code).toBe(3);
    expect(failed.stderr).toMatch(/^compaction: .*:500: expected a JSON object per line/);
    expect(failed.stdout).toBe("");
    const skipped = sandbox.run(["--skip-corrupt", "search", "user-message-selector.ts"], { NO_COLOR: "1" });
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/compaction: skipped line 500 of /);
    expect(skipped.stderr).toMatch(/the current branch breaks at skipped line 500: 498 earlier entries are not on it and are not searched/);
  });

  it("prints a JSON error object with the code on stdout when a --json command fails", () => {
    const run = sandbox.run(["context", "status", "--json", "--session", "0000dead"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    const report = JSON.parse(run.stdout) as { error: { code: string; message: string; hint: string | null; exitCode: number } };
    expect(report.error).toMatchObject({ code: "COMPACTION_TRANSCRIPT_NOT_FOUND", exitCode: 3 });
    expect(report.error.message).toMatch(/^No session with id "0000dead"/);
    expect(run.stderr).toMatch(/^compaction: No session with id "0000dead"/);
    const usage = sandbox.run(["search", " ", "--json"], { NO_COLOR: "1" });
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ error: { code: "COMPACTION_USAGE", message: "The query is empty.", exitCode: 2 } });
  });

  it("prints the JSON error only when --json is an option, not when it is an option's value or an argument after --", () => {
    const valued = sandbox.run(["context", "status", "--session", "--json"], { NO_COLOR: "1" });
    expect(valued.code).toBe(3);
    expect(valued.stdout).toBe("");
    expect(valued.stderr).toMatch(/^compaction: No session with id "--json"/);
    const argument = sandbox.run(["search", "--session", "0000dead", "--", "--json"], { NO_COLOR: "1" });
    expect(argument.code).toBe(3);
    expect(argument.stdout).toBe("");
    expect(argument.stderr).toMatch(/^compaction: No session with id "0000dead"/);
  });

  it("colours a command's error unless --no-color is given, before or after the command", () => {
    const coloured = sandbox.run(["context", "status", "--session", "0000dead"], { FORCE_COLOR: "1" });
    expect(coloured.stderr).toMatch(/^\u001b\[31mcompaction:/);
    for (const argv of [["--no-color", "context", "status", "--session", "0000dead"], ["context", "status", "--session", "0000dead", "--no-color"]]) {
      expect(sandbox.run(argv, { FORCE_COLOR: "1" }).stderr).toMatch(/^compaction: No session/);
    }
  });

  it("prints the version with --version and exits 0", () => {
    const run = sandbox.run(["--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("lists the exit codes and examples in --help", () => {
    const run = sandbox.run(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Exit codes:");
    expect(run.stdout).toContain("4  invalid config");
    expect(run.stdout).toContain("5  the session's database cannot be reached");
    expect(run.stdout).toContain("compaction compact --dry-run");
  });

  it("says in --help which agents' sessions it works on, with a compare example and an OpenClaw one as docs/cli.md has it", () => {
    const help = sandbox.run(["--help"]).stdout;
    // The description is wrapped to the terminal's width.
    expect(help.replace(/\s+/g, " ")).toContain("on pi-coding-agent, OpenClaw, Claude Code and Codex sessions");
    expect(help).toMatch(/^ {2}compaction compare --window \d+ +/m);
    expect(help).toMatch(/^ {2}compaction context status --session openclaw:main +/m);
    expect(help).toContain("~/.openclaw/agents/<agentId>/agent/");
    expect(help).not.toContain("~/.openclaw/sessions");
    const page = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
    expect(page).toContain("`openclaw:<agentId>`");
    expect(page).toContain("`~/.openclaw/agents/<agentId>/agent/`");
  });
});
