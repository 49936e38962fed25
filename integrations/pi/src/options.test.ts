import { CompactionError, ErrorCodes } from "@compaction/core";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { AGENT_ENV, BACKGROUND_ENV, FALLBACK_ENV, type PiFallback, PRESET_ENV, PRUNE_ENV, resolvePiCompactionOptions } from "./options.js";

const ctx = { cwd: "/work/agent-a" } as ExtensionContext;

describe("resolvePiCompactionOptions", () => {
  it("uses no agent section, the configured preset, cancel, and pruning when nothing is set", () => {
    const resolved = resolvePiCompactionOptions({}, {});
    expect(resolved.agent(ctx)).toBeUndefined();
    expect(resolved.preset).toBeUndefined();
    expect(resolved.fallback).toBe("cancel");
    expect(resolved.pruneContext).toBe(true);
  });

  it("takes the agent, preset and fallback from the environment", () => {
    const resolved = resolvePiCompactionOptions({}, { [AGENT_ENV]: "coder", [PRESET_ENV]: "rolling", [FALLBACK_ENV]: "pi" });
    expect([resolved.agent(ctx), resolved.preset, resolved.fallback]).toEqual(["coder", "rolling", "pi"]);
  });

  it("prefers the options over the environment", () => {
    const resolved = resolvePiCompactionOptions({ agent: "researcher", preset: "layered" }, { [AGENT_ENV]: "coder", [PRESET_ENV]: "rolling" });
    expect([resolved.agent(ctx), resolved.preset]).toEqual(["researcher", "layered"]);
  });

  it("calls an agent function with pi's context", () => {
    const resolved = resolvePiCompactionOptions({ agent: (c) => (c.cwd.endsWith("agent-a") ? "a" : undefined) }, {});
    expect(resolved.agent(ctx)).toBe("a");
  });

  it.each(["off", "OFF", "false", "0", "no"])("turns pruning off when %s is set in the environment", (value) => {
    expect(resolvePiCompactionOptions({}, { [PRUNE_ENV]: value }).pruneContext).toBe(false);
  });

  it("ignores blank environment values", () => {
    const resolved = resolvePiCompactionOptions({}, { [AGENT_ENV]: "  ", [PRESET_ENV]: "", [PRUNE_ENV]: " " });
    expect([resolved.agent(ctx), resolved.preset, resolved.pruneContext]).toEqual([undefined, undefined, true]);
  });

  it("rejects an unknown fallback option with its code and what to use", () => {
    const call = () => resolvePiCompactionOptions({ fallback: "summarise" as PiFallback }, {});
    expect(call).toThrow(CompactionError);
    expect(call).toThrow(/Invalid option 'fallback'.*expected "cancel" or "pi", found "summarise"/);
    try {
      call();
    } catch (error) {
      expect((error as CompactionError).code).toBe(ErrorCodes.INPUT_INVALID);
      expect((error as CompactionError).hint).toMatch(/"cancel".*"pi"/);
    }
  });

  it("prepares in the background by default (auto), and takes on or off from the option, else the environment", () => {
    expect(resolvePiCompactionOptions({}, {}).background).toBe("auto");
    expect(resolvePiCompactionOptions({}, { [BACKGROUND_ENV]: "off" }).background).toBe(false);
    expect(resolvePiCompactionOptions({}, { [BACKGROUND_ENV]: "on" }).background).toBe(true);
    expect(resolvePiCompactionOptions({ background: true }, { [BACKGROUND_ENV]: "off" }).background).toBe(true);
    expect(resolvePiCompactionOptions({}, {}).waitMs).toBe(30_000);
  });

  it("rejects a background setting it does not know, naming the variable or option", () => {
    expect(() => resolvePiCompactionOptions({}, { [BACKGROUND_ENV]: "sometimes" })).toThrow(/environment variable '\$COMPACTION_PI_BACKGROUND'.*"auto", "on" or "off"/);
    expect(() => resolvePiCompactionOptions({ waitMs: -1 }, {})).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/waitMs" }));
  });

  it("names the environment variable when the fallback came from it", () => {
    expect(() => resolvePiCompactionOptions({}, { [FALLBACK_ENV]: "later" })).toThrow(/environment variable '\$COMPACTION_PI_FALLBACK'/);
  });
});
