import { describe, expect, it } from "vitest";
import { applyAgentSection, mergePluginOptions } from "./merge.js";

describe("applyAgentSection", () => {
  it("replaces each key the section sets and keeps the others", () => {
    const merged = applyAgentSection({ preset: "safeguard", contextWindow: 100 }, { preset: "rolling" });
    expect(merged).toEqual({ preset: "rolling", contextWindow: 100 });
  });

  it("replaces objects and lists whole rather than merging them", () => {
    const merged = applyAgentSection(
      { tokenizer: { counter: "estimate", encoding: "cl100k_base" }, plugins: ["a", "b"] },
      { tokenizer: { encoding: "o200k_base" }, plugins: ["c"] },
    );
    expect(merged).toEqual({ tokenizer: { encoding: "o200k_base" }, plugins: ["c"] });
  });

  it("ignores keys the section holds as undefined", () => {
    expect(applyAgentSection({ preset: "safeguard" }, { preset: undefined })).toEqual({ preset: "safeguard" });
  });

  it("modifies neither input", () => {
    const base = { preset: "safeguard", options: { rolling: { a: 1 } } };
    const section = { options: { rolling: { b: 2 } } };
    applyAgentSection(base, section);
    expect(base).toEqual({ preset: "safeguard", options: { rolling: { a: 1 } } });
    expect(section).toEqual({ options: { rolling: { b: 2 } } });
  });
});

describe("mergePluginOptions", () => {
  it("merges per plugin and then per option key, the second argument winning", () => {
    const merged = mergePluginOptions({ rolling: { a: 1, b: 1 }, safeguard: { s: 1 } }, { rolling: { b: 2 }, layered: { l: 2 } });
    expect(merged).toEqual({ rolling: { a: 1, b: 2 }, safeguard: { s: 1 }, layered: { l: 2 } });
  });

  it("replaces an option whose value is an object whole", () => {
    const merged = mergePluginOptions({ rolling: { limits: { a: 1, b: 1 } } }, { rolling: { limits: { b: 2 } } });
    expect(merged).toEqual({ rolling: { limits: { b: 2 } } });
  });

  it("keeps a plugin named __proto__ as an ordinary key", () => {
    const over = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, Record<string, unknown>>;
    const merged = mergePluginOptions({}, over);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, "__proto__")).toBe(true);
  });
});
