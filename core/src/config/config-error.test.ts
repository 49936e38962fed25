import { describe, expect, it } from "vitest";
import { CompactionError, ErrorCodes } from "../errors.js";
import { ConfigError, configUnreadable } from "./config-error.js";
import { describeValue } from "./schema-problems.js";

describe("ConfigError", () => {
  it("is a CompactionError carrying file, the first problem's path, and every problem", () => {
    const problems = [
      { path: "/preset", message: "expected a string, found integer 1", hint: "Use a string." },
      { path: "/adapter", message: 'expected one of "pi", found string "x"', hint: 'Allowed values: "pi".' },
    ];
    const error = new ConfigError(ErrorCodes.CONFIG_INVALID, problems, { file: "/p/.compactionrc" });
    expect(error).toBeInstanceOf(CompactionError);
    expect(error.file).toBe("/p/.compactionrc");
    expect(error.path).toBe("/preset");
    expect(error.errors).toEqual(problems);
    expect(error.hint).toBe('/preset: Use a string.\n/adapter: Allowed values: "pi".');
  });

  it("writes one problem on the message's first line and several on a line each", () => {
    const one = new ConfigError(ErrorCodes.CONFIG_INVALID, [{ path: "/a", message: "bad", hint: "Fix it." }], { file: "/f" });
    // The hint is the error's hint, not repeated in the message.
    expect(one.message).toBe("Invalid compaction config /f: /a: bad.");
    expect(one.hint).toBe("Fix it.");
    const two = new ConfigError(ErrorCodes.CONFIG_INVALID, [
      { path: "/a", message: "bad", hint: "Fix a." },
      { path: "", message: "worse", hint: "Fix all." },
    ]);
    expect(two.message.split("\n")).toEqual(["Invalid compaction config: 2 problems:", "  /a: bad.", "  (top level): worse."]);
    expect(two.hint).toBe("/a: Fix a.\n(top level): Fix all.");
  });

  it("refuses to be built without a problem", () => {
    expect(() => new ConfigError(ErrorCodes.CONFIG_INVALID, [])).toThrow(TypeError);
  });
});

describe("configUnreadable", () => {
  it("tells the user to install typescript when a .ts config cannot load it", () => {
    const cause = Object.assign(new Error("Cannot find package 'typescript' imported from /x/loaders.js"), { code: "ERR_MODULE_NOT_FOUND" });
    const error = configUnreadable("/p/.compactionrc.ts", cause);
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe("/p/.compactionrc.ts");
    expect(error.hint).toContain("npm install --save-dev typescript");
    expect(error.cause).toBe(cause);
  });

  it("drops cosmiconfig's 'YAML Error in <file>' prefix, since the file is named already", () => {
    const error = configUnreadable("/p/.compactionrc", new Error("YAML Error in /p/.compactionrc:\nbad indentation (2:3)"));
    expect(error.message).toBe("Cannot read compaction config /p/.compactionrc: bad indentation (2:3).");
    expect(error.hint).toMatch(/^Fix the YAML/);
  });
});

describe("describeValue", () => {
  it.each<[unknown, string]>([
    ["big", 'string "big"'],
    [5, "integer 5"],
    [1.5, "number 1.5"],
    [true, "boolean true"],
    [null, "null"],
    [[], "an empty array"],
    [[1], "an array of 1 item"],
    [{}, "an object"],
    [() => 1, "a function"],
    ["x".repeat(60), `string "${"x".repeat(36)}...`],
    [Number.POSITIVE_INFINITY, "number Infinity (not a finite number)"],
    [Number.NaN, "number NaN (not a finite number)"],
  ])("describes %j as %s", (value, text) => {
    expect(describeValue(value)).toBe(text);
  });
});
