import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createOptionsValidator } from "./plugin-options.js";

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
