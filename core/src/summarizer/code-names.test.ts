import { describe, expect, it } from "vitest";
import { declaredNames } from "./code-names.js";

describe("declaredNames", () => {
  it("names the methods, functions, classes and types of an edit's new text, calls written name()", () => {
    const newText = [
      "export class AgentSession {",
      "  get thinkingLevel(): ThinkingLevel {",
      "  async getSessionStats(): Promise<SessionStats> {",
      "  private _disconnectFromAgent() {",
      "    if (this.x) {",
      "}",
      "export interface SessionStats { total: number }",
      "const formatTokens = (n: number) => String(n);",
    ].join("\n");
    expect(declaredNames({ path: "a.ts", oldText: "function oldName() {}", newText })).toEqual([
      "AgentSession",
      "SessionStats",
      "thinkingLevel()",
      "getSessionStats()",
      "_disconnectFromAgent()",
      "formatTokens()",
    ]);
  });

  it("reads a written file's content and nested edits, never the old text", () => {
    expect(declaredNames({ edits: [{ old_string: "def gone():", new_string: "def kept_name():\n    pass" }] })).toEqual(["kept_name"]);
    expect(declaredNames({ file_text: "fn parse_args() {}" })).toEqual(["parse_args"]);
    expect(declaredNames({ command: "function x() {}" })).toEqual([]);
  });
});
