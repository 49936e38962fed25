import { describe, expect, it } from "vitest";
import { programName, spellCommands } from "./program-name.js";

describe("programName", () => {
  // What npm gives the command it starts, as measured with npm 10.9 and 11.19 (a bin printing its
  // environment): npx and `npm exec` set both; a package script has its own lifecycle event.
  it.each([
    ["npx compaction or npm exec compaction (npm 10 and 11)", { npm_command: "exec", npm_lifecycle_event: "npx" }, "npx compaction"],
    ["only npm_command=exec", { npm_command: "exec" }, "npx compaction"],
    ["only npm_lifecycle_event=npx", { npm_lifecycle_event: "npx" }, "npx compaction"],
    ["npm run <script> (the bin on the script's PATH)", { npm_command: "run", npm_lifecycle_event: "demo" }, "compaction"],
    ["a global install or the bin on the PATH", {}, "compaction"],
  ] as const)("%s: %s", (_how, env, expected) => {
    expect(programName(env)).toBe(expected);
  });
});

describe("spellCommands", () => {
  it.each([
    ["Export the session again with `compaction context export <file>`.", "Export the session again with `npx compaction context export <file>`."],
    ["(compaction context export state.json, then compaction context import state.json)", "(npx compaction context export state.json, then npx compaction context import state.json)"],
    ["'compaction session list --db sqlite:s.db' lists them", "'npx compaction session list --db sqlite:s.db' lists them"],
    ['Pass the words to look for: compaction search "failing test".', 'Pass the words to look for: npx compaction search "failing test".'],
    ["Run 'compaction autocompact' to show the setting", "Run 'npx compaction autocompact' to show the setting"],
  ])("spells the command lines in %j as npx runs them", (text, spelled) => {
    expect(spellCommands(text, "npx compaction")).toBe(spelled);
  });

  it.each([
    ["prose: a group's name without its command", "select the compaction context engine (@compaction/openclaw)"],
    ["a path", "cd /srv/compaction context export"],
    ["a package name", "npm install @compaction/cli"],
    ["a command already spelled with npx", "run `npx compaction context status`"],
    ["a word that only starts the same", "compaction compacts; compaction configs"],
  ])("leaves %s alone", (_what, text) => {
    expect(spellCommands(text, "npx compaction")).toBe(text);
  });

  it("changes nothing for a CLI run as compaction", () => {
    const text = "Export the session again with `compaction context export <file>`.";
    expect(spellCommands(text, "compaction")).toBe(text);
  });
});
