import { describe, expect, it } from "vitest";
import { collectFailedCalls, failedCallLine } from "./failed-calls.js";
import { fact } from "./test-support/facts.js";

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: args });

describe("collectFailedCalls", () => {
  it("lists each failed call with its tool, its path or command and the error line", () => {
    const failed = collectFailedCalls([
      fact("assistant", { toolCalls: [call("1", "bash", { command: "npm test" }), call("2", "edit", { path: "a.ts" })] }),
      fact("toolResult", { toolResultIds: ["1"], isError: true, toolName: "bash", text: "> test\n\nError: 3 tests failed\nmore" }),
      fact("toolResult", { toolResultIds: ["2"], isError: false, toolName: "edit", text: "ok" }),
    ]);
    expect(failed).toEqual(["bash(npm test): Error: 3 tests failed"]);
  });

  it("keeps the failed calls listed by an earlier summary first", () => {
    const failed = collectFailedCalls([
      fact("summary", { text: "## Commands & Tool Calls\n### Failed\n- make: No rule to make target" }),
      fact("assistant", { toolCalls: [call("1", "read", { path: "x.ts" })] }),
      fact("toolResult", { toolResultIds: ["1"], isError: true, text: "ENOENT: no such file or directory" }),
    ]);
    expect(failed).toEqual(["make: No rule to make target", "read(x.ts): ENOENT: no such file or directory"]);
  });

  it("pairs a reused call id with the nearest earlier call", () => {
    const failed = collectFailedCalls([
      fact("assistant", { toolCalls: [call("call_0", "bash", { command: "ls" })] }),
      fact("toolResult", { toolResultIds: ["call_0"] }),
      fact("assistant", { toolCalls: [call("call_0", "bash", { command: "make" })] }),
      fact("toolResult", { toolResultIds: ["call_0"], isError: true, text: "make: *** No targets." }),
    ]);
    expect(failed).toEqual(["bash(make): make: *** No targets."]);
  });

  it("drops repeats", () => {
    const messages = [
      fact("assistant", { toolCalls: [call("1", "bash", { command: "x" })] }),
      fact("toolResult", { toolResultIds: ["1"], isError: true, text: "boom" }),
      fact("assistant", { toolCalls: [call("2", "bash", { command: "x" })] }),
      fact("toolResult", { toolResultIds: ["2"], isError: true, text: "boom" }),
    ];
    expect(collectFailedCalls(messages)).toEqual(["bash(x): boom"]);
  });

  it("finds nothing when every call succeeded", () => {
    const messages = [fact("assistant", { toolCalls: [call("1", "bash", {})] }), fact("toolResult", { toolResultIds: ["1"] })];
    expect(collectFailedCalls(messages)).toEqual([]);
  });
});

describe("failedCallLine", () => {
  it("names a result whose call is unknown by its tool", () => {
    expect(failedCallLine(undefined, fact("toolResult", { toolName: "grep", text: "\n\nbad pattern" }))).toBe("grep: bad pattern");
  });

  it("shows other arguments as compact JSON, cut short", () => {
    const line = failedCallLine(call("1", "search", { query: "x".repeat(300) }), fact("toolResult", { text: "" }));
    expect(line).toMatch(/^search\(\{"query":"x+…\): \(no output\)$/);
    expect(line.length).toBeLessThan(130);
  });
});
