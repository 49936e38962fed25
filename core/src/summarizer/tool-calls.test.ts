import { describe, expect, it } from "vitest";
import { readToolCall } from "./tool-calls.js";

describe("readToolCall", () => {
  it("names the verb of a modifying call after what it did", () => {
    expect(readToolCall({ id: "1", name: "write", arguments: { path: "a.ts" } }).verb).toBe("wrote");
    expect(readToolCall({ id: "2", name: "Edit", arguments: { file_path: "a.ts" } }).verb).toBe("edited");
  });

  it("reads every file of a multi-file patch", () => {
    const patch = "*** Begin Patch\n*** Add File: a.ts\n+x\n*** Update File: b.ts\n*** Move to: c.ts\n*** End Patch";
    expect(readToolCall({ id: "1", name: "apply_patch", arguments: { input: patch } }).paths).toEqual(["a.ts", "b.ts", "c.ts"]);
  });

  it("reads a patch applied through the shell tool as a modification", () => {
    const reading = readToolCall({
      id: "1",
      name: "shell",
      arguments: { command: ["apply_patch", "*** Begin Patch\n*** Update File: x.py\n*** End Patch"] },
    });
    expect([reading.kind, reading.paths]).toEqual(["modify", ["x.py"]]);
  });

  it("summarises an other tool's arguments as key=value pairs, cutting long values", () => {
    const reading = readToolCall({ id: "1", name: "WebFetch", arguments: { url: "https://x.dev", prompt: "p".repeat(100) } });
    expect(reading.kind).toBe("other");
    expect(reading.argsSummary).toBe(`url=https://x.dev, prompt=${"p".repeat(59)}…`);
  });

  it("treats a read tool without a path as an other call", () => {
    expect(readToolCall({ id: "1", name: "read", arguments: {} }).kind).toBe("other");
  });

  it("keeps a string argument that is not JSON as its input", () => {
    expect(readToolCall({ id: "1", name: "custom", arguments: "raw text" }).argsSummary).toBe("input=raw text");
  });
});
