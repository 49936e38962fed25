import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { SLIDING_WINDOW_OPTIONS_SCHEMA } from "./options.js";
import { PLUGIN_NAME, resolveSlidingWindowOptions, slidingWindow } from "./sliding-window.js";

const invalid = (path: string, message: RegExp) =>
  expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, plugin: PLUGIN_NAME, path, message: expect.stringMatching(message) });

describe("sliding-window options", () => {
  it("fills in the issue's defaults: keep 40% of the window, prefix 'Previously:'", () => {
    expect(resolveSlidingWindowOptions()).toEqual({
      keepRatio: 0.4,
      summaryPrefix: "Previously:",
      summaryMaxTokens: null,
      chunkTokens: 100000,
    });
  });

  it("keeps the options it is given and does not modify the caller's object", () => {
    const given = { keepRatio: 0.25, summaryPrefix: "Earlier:", summaryMaxTokens: 500, chunkTokens: 2000 };
    expect(resolveSlidingWindowOptions(given)).toEqual(given);
    expect(given).toEqual({ keepRatio: 0.25, summaryPrefix: "Earlier:", summaryMaxTokens: 500, chunkTokens: 2000 });
  });

  it("treats an undefined summaryMaxTokens as the compactor's (null)", () => {
    expect(resolveSlidingWindowOptions({ summaryMaxTokens: undefined }).summaryMaxTokens).toBeNull();
  });

  it.each([
    [{ keepRatio: 0 }, "/keepRatio"],
    [{ keepRatio: -0.1 }, "/keepRatio"],
    [{ keepRatio: 1.01 }, "/keepRatio"],
    [{ keepRatio: "40%" }, "/keepRatio"],
    [{ summaryPrefix: "" }, "/summaryPrefix"],
    [{ summaryPrefix: "   " }, "/summaryPrefix"],
    [{ summaryMaxTokens: 0 }, "/summaryMaxTokens"],
    [{ summaryMaxTokens: 1.5 }, "/summaryMaxTokens"],
    [{ chunkTokens: 0 }, "/chunkTokens"],
    [{ chunkTokens: "100k" }, "/chunkTokens"],
  ])("rejects %j, naming the plugin and %s", (options, path) => {
    expect(() => slidingWindow(options as never)).toThrow(invalid(path, /Invalid options for plugin 'sliding-window'/));
  });

  it("accepts keepRatio 1 (keep as much as the window holds)", () => {
    expect(resolveSlidingWindowOptions({ keepRatio: 1 }).keepRatio).toBe(1);
  });

  it("suggests the nearest option name for a misspelling", () => {
    expect(() => slidingWindow({ keepRatoi: 0.5 } as never)).toThrow(invalid("/keepRatoi", /Did you mean 'keepRatio'\?/));
  });

  it("returns a plugin named sliding-window", () => {
    expect(slidingWindow().name).toBe("sliding-window");
  });
});

describe("SLIDING_WINDOW_OPTIONS_SCHEMA", () => {
  const properties = SLIDING_WINDOW_OPTIONS_SCHEMA.properties as Record<string, Record<string, unknown>>;

  it("is a closed object schema", () => {
    expect(SLIDING_WINDOW_OPTIONS_SCHEMA.type).toBe("object");
    expect(SLIDING_WINDOW_OPTIONS_SCHEMA.additionalProperties).toBe(false);
  });

  it.each(Object.keys(SLIDING_WINDOW_OPTIONS_SCHEMA.properties))("documents %s in camelCase with a description and a default", (name) => {
    expect(name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(properties[name]?.["description"]).toEqual(expect.stringMatching(/\S/));
    expect(properties[name]).toHaveProperty("default");
  });

  it("survives a JSON round trip unchanged (plain data, copyable into the core schema)", () => {
    expect(JSON.parse(JSON.stringify(SLIDING_WINDOW_OPTIONS_SCHEMA))).toEqual(SLIDING_WINDOW_OPTIONS_SCHEMA);
  });
});
