import { describe, expect, it } from "vitest";
import { describeCall, formatPrunedMarker, isPrunedMarker } from "./marker.js";

describe("formatPrunedMarker", () => {
  it("names the tool with its arguments, the failure and the size with thousands separators", () => {
    expect(formatPrunedMarker({ calls: [{ name: "bash", arguments: { command: "npm test" } }], failed: true, imageCount: 0, tokens: 12345 })).toBe(
      '[pruned tool output: bash(command="npm test") — failed, 12,345 tokens]',
    );
  });

  it("leaves out `failed` for a tool that succeeded", () => {
    expect(formatPrunedMarker({ calls: [{ name: "read", arguments: { path: "a.ts" } }], failed: false, imageCount: 0, tokens: 999 })).toBe(
      '[pruned tool output: read(path="a.ts") — 999 tokens]',
    );
  });

  it("counts images the output carried", () => {
    expect(formatPrunedMarker({ calls: [{ name: "screenshot", arguments: {} }], failed: false, imageCount: 2, tokens: 3000 })).toBe(
      "[pruned tool output: screenshot() — 2 images, 3,000 tokens]",
    );
  });

  it("lists every call a message answers", () => {
    const marker = formatPrunedMarker({
      calls: [
        { name: "read", arguments: { path: "a.ts" } },
        { name: "bash", arguments: { command: "ls" } },
      ],
      failed: false,
      imageCount: 0,
      tokens: 10,
    });
    expect(marker).toBe('[pruned tool output: read(path="a.ts"), bash(command="ls") — 10 tokens]');
  });

  it("says `unknown tool` when no call or tool name is known", () => {
    expect(formatPrunedMarker({ calls: [], failed: false, imageCount: 0, tokens: 5 })).toBe("[pruned tool output: unknown tool — 5 tokens]");
    expect(formatPrunedMarker({ calls: [{ name: "" }], failed: false, imageCount: 0, tokens: 5 })).toBe(
      "[pruned tool output: unknown tool — 5 tokens]",
    );
  });

  it("stays on one line when an argument holds newlines", () => {
    const marker = formatPrunedMarker({ calls: [{ name: "bash", arguments: { command: "cd a\nnpm test" } }], failed: false, imageCount: 0, tokens: 1 });
    expect(marker).not.toContain("\n");
    expect(marker).toContain('bash(command="cd a\\nnpm test")');
  });

  it("is recognised by isPrunedMarker, failed or not, with or without images", () => {
    for (const failed of [true, false]) {
      for (const imageCount of [0, 1, 3]) {
        expect(isPrunedMarker(formatPrunedMarker({ calls: [{ name: "x", arguments: { a: "]" } }], failed, imageCount, tokens: 123456 }))).toBe(true);
      }
    }
  });
});

describe("describeCall", () => {
  it("shortens a long argument value to 60 characters, keeping its start and end around an ellipsis", () => {
    const command = `cd /Users/someone/workspaces/project/packages/${"deep/".repeat(20)}app && npm test`;
    const described = describeCall({ name: "bash", arguments: { command } });
    expect(described).toBe(`bash(command="${command.slice(0, 30)}…${command.slice(-29)}")`);
    expect(described).toContain("app && npm test");
  });

  it("shows at most four arguments, then an ellipsis", () => {
    expect(describeCall({ name: "t", arguments: { a: 1, b: true, c: null, d: [1, 2], e: "more" } })).toBe("t(a=1, b=true, c=null, d=[1,2], …)");
  });

  it("shows nested objects as shortened JSON", () => {
    const json = `{"k":"${"v".repeat(100)}"}`;
    expect(describeCall({ name: "t", arguments: { o: { k: "v".repeat(100) } } })).toBe(`t(o=${json.slice(0, 30)}…${json.slice(-29)})`);
  });

  it("shows arguments that are not an object (an unparsable JSON string) as one shortened value", () => {
    expect(describeCall({ name: "bash", arguments: "{not json" })).toBe('bash("{not json")');
  });

  it("shows only the name when the issuing call was not found", () => {
    expect(describeCall({ name: "bash" })).toBe("bash");
  });
});

describe("isPrunedMarker", () => {
  it("finds a marker line among other lines (an Anthropic message with user text beside its results)", () => {
    expect(isPrunedMarker("see below\n[pruned tool output: bash — 10 tokens]")).toBe(true);
  });

  it("does not take output that merely quotes the prefix for a marker", () => {
    expect(isPrunedMarker('const PREFIX = "[pruned tool output: ";')).toBe(false);
    expect(isPrunedMarker("  [pruned tool output: bash — 10 tokens]")).toBe(false);
    expect(isPrunedMarker("[pruned tool output: bash — many tokens]")).toBe(false);
  });

  it("is false for ordinary output", () => {
    expect(isPrunedMarker("PASS src/a.test.ts")).toBe(false);
  });
});
