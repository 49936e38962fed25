import { describe, expect, it } from "vitest";
import { queryWords, snippet } from "./snippet.js";

const filler = (n: number, word = "lorem") => Array.from({ length: n }, () => word).join(" ");

describe("snippet", () => {
  it("returns a short text whole, whitespace collapsed", () => {
    expect(snippet("  fix\nthe\t\ttests  ", ["tests"], 200)).toBe("fix the tests");
  });

  it("shows the window around the match, a third of it before, with ellipses at cut ends", () => {
    const text = `${filler(100)} needle ${filler(100)}`;
    const result = snippet(text, ["needle"], 90);
    expect(result.startsWith("…")).toBe(true);
    expect(result.endsWith("…")).toBe(true);
    expect(result).toContain("needle");
    const before = result.indexOf("needle") - 1;
    expect(before).toBeGreaterThanOrEqual(20);
    expect(before).toBeLessThanOrEqual(35);
    expect(result.length).toBeLessThanOrEqual(92);
  });

  it("cuts at word boundaries", () => {
    const result = snippet(`${filler(50, "alpha")} needle ${filler(50, "omega")}`, ["needle"], 80);
    expect(result.slice(1, -1).split(" ").every((word) => ["alpha", "needle", "omega"].includes(word))).toBe(true);
  });

  it("matches terms case-insensitively", () => {
    expect(snippet(`${filler(80)} WebSocket ${filler(80)}`, ["websocket"], 60)).toContain("WebSocket");
  });

  it("starts at the beginning when no term occurs", () => {
    const result = snippet(`first words ${filler(100)}`, ["absent"], 50);
    expect(result.startsWith("first words")).toBe(true);
    expect(result.endsWith("…")).toBe(true);
  });

  it("prefers where a term starts a word over where it occurs inside one", () => {
    const text = `Editortheme ${filler(100)} theme settings ${filler(100)}`;
    expect(snippet(text, ["theme"], 60)).toContain("theme settings");
  });

  it.each([
    ["a path", "src/ui/theme-selector.ts"],
    ["a file name", "selector.tsx"],
    ["a camelCase hump", "buildThemeSelector"],
    ["a PascalCase name", "ThemeSelector"],
    ["a snake_case name", "theme_selector_state"],
  ])("centres on the term inside an identifier (%s) over the same term in prose before it", (_kind, identifier) => {
    const text = `${filler(60)} the selector was slow ${filler(80)} then ${identifier} changed ${filler(80)}`;
    const result = snippet(text, ["selector"], 80);
    expect(result).toContain(identifier);
    expect(result).not.toContain("selector was slow");
  });

  it("still prefers more distinct terms in prose over one term inside an identifier", () => {
    const text = `${filler(60)} src/cache.ts ${filler(80)} the cache eviction policy ${filler(80)}`;
    expect(snippet(text, ["cache", "eviction", "policy"], 60)).toContain("cache eviction policy");
  });

  it("does not take a hyphenated word of prose for an identifier", () => {
    const text = `${filler(60)} a selector here ${filler(80)} a well-selector-ish phrase ${filler(80)}`;
    expect(snippet(text, ["selector"], 60)).toContain("a selector here");
  });

  it("centres on the stretch holding the most distinct terms", () => {
    const text = `cache ${filler(80)} cache eviction policy ${filler(80)}`;
    expect(snippet(text, ["cache", "eviction", "policy"], 60)).toContain("cache eviction policy");
  });
});

describe("queryWords", () => {
  it("splits a query into lower-case words of two letters or more", () => {
    expect(queryWords("Fix the user-message-selector, a TS file!")).toEqual(["fix", "the", "user", "message", "selector", "ts", "file"]);
  });
});
