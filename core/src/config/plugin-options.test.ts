import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createOptionsValidator, optionsValidatorSource } from "./plugin-options.js";

const validate = createOptionsValidator<{ minKeepMessages: number; evictionNote: boolean }>("rolling", {
  type: "object",
  additionalProperties: false,
  properties: {
    minKeepMessages: { type: "integer", minimum: 1, default: 10 },
    evictionNote: { type: "boolean", default: true },
  },
});

describe("createOptionsValidator", () => {
  it("fills in defaults without touching the caller's object", () => {
    const given = { evictionNote: false };
    expect(validate(given)).toEqual({ minKeepMessages: 10, evictionNote: false });
    expect(given).toEqual({ evictionNote: false });
    expect(validate()).toEqual({ minKeepMessages: 10, evictionNote: true });
  });

  it("names the plugin, the option and the nearest valid name for a misspelling", () => {
    expect(() => validate({ minKeepMesages: 3 })).toThrow(
      expect.objectContaining({
        code: ErrorCodes.PLUGIN_OPTIONS_INVALID,
        plugin: "rolling",
        path: "/minKeepMesages",
        message: expect.stringMatching(/Invalid options for plugin 'rolling'.*Did you mean 'minKeepMessages'\?/s),
      }),
    );
  });

  it("lists every bad option at once", () => {
    expect(() => validate({ minKeepMessages: 0, evictionNote: "yes" })).toThrow(/minKeepMessages.*\n.*evictionNote/s);
  });
});

describe("createOptionsValidator with a validator generated at build time", () => {
  const schema = {
    type: "object",
    additionalProperties: false,
    properties: { minKeepMessages: { type: "integer", minimum: 1, default: 10 }, evictionNote: { type: "boolean", default: true } },
  };
  // Inside the package, so the generated code's require("ajv/dist/runtime/...") resolves as in dist/.
  const dir = mkdtempSync(join(import.meta.dirname, ".generated-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "options-validator.generated.cjs");
  writeFileSync(file, optionsValidatorSource("rolling", schema));

  it("uses the generated file when it is there, with the same defaults and the same errors", () => {
    const generated = createOptionsValidator<{ minKeepMessages: number }>("rolling", { type: "object" }, { generated: pathToFileURL(file) });
    // The schema given is a placeholder that accepts anything: only the generated file checks and fills.
    expect(generated()).toEqual({ minKeepMessages: 10, evictionNote: true });
    const runtime = createOptionsValidator("rolling", schema);
    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (error) {
        return (error as Error).message;
      }
      return "no error";
    };
    expect(message(() => generated({ minKeepMesages: 0 }))).toBe(message(() => runtime({ minKeepMesages: 0 })));
    expect(message(() => generated({ minKeepMessages: 0 }))).toContain("minKeepMessages");
  });

  it("compiles the schema when the generated file's ajv runtime cannot be found from where it is", () => {
    const stray = join(dir, "needs-runtime.cjs");
    writeFileSync(stray, 'module.exports = require("ajv-runtime-that-is-not-installed"); module.exports.default = module.exports;');
    const fallback = createOptionsValidator("rolling", schema, { generated: pathToFileURL(stray) });
    expect(fallback()).toEqual({ minKeepMessages: 10, evictionNote: true });
  });

  it("compiles the schema when no build wrote the file", () => {
    const fallback = createOptionsValidator("rolling", schema, { generated: pathToFileURL(join(dir, "absent.cjs")) });
    expect(fallback()).toEqual({ minKeepMessages: 10, evictionNote: true });
  });
});
