import { describe, expect, it } from "vitest";
import { collectFileLists, fileListsOfSummary, fileOperationOf } from "./file-lists.js";
import { fact } from "./test-support/facts.js";

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: args });

describe("fileOperationOf", () => {
  it.each([
    ["read", { path: "a.ts" }, { kind: "read", paths: ["a.ts"] }],
    ["Read", { file_path: "/x/a.ts" }, { kind: "read", paths: ["/x/a.ts"] }],
    ["view", { path: "a.ts" }, { kind: "read", paths: ["a.ts"] }],
    ["write", { path: "b.ts", content: "x" }, { kind: "modify", paths: ["b.ts"] }],
    ["Edit", { file_path: "b.ts" }, { kind: "modify", paths: ["b.ts"] }],
    ["MultiEdit", { filePath: "c.ts" }, { kind: "modify", paths: ["c.ts"] }],
    ["NotebookEdit", { notebook_path: "n.ipynb" }, { kind: "modify", paths: ["n.ipynb"] }],
    ["str_replace_based_edit_tool", { command: "view", path: "d.ts" }, { kind: "read", paths: ["d.ts"] }],
    ["str_replace_based_edit_tool", { command: "str_replace", path: "d.ts" }, { kind: "modify", paths: ["d.ts"] }],
    ["apply_patch", { input: "*** Begin Patch\n*** Update File: e.ts\n*** Add File: f.ts\n*** End Patch" }, { kind: "modify", paths: ["e.ts", "f.ts"] }],
    ["edit", '{"path":"g.ts"}', { kind: "modify", paths: ["g.ts"] }],
  ] as const)("%s %j", (name, args, expected) => {
    expect(fileOperationOf(call("c", name, args))).toEqual(expected);
  });

  it.each([
    ["bash", { command: "cat a.ts" }],
    ["read", {}],
    ["edit", "not json"],
    ["search", { path: "src" }],
  ] as const)("finds no file operation in %s %j", (name, args) => {
    expect(fileOperationOf(call("c", name, args))).toBeUndefined();
  });
});

describe("collectFileLists", () => {
  it("lists files read and modified, a file both read and modified as modified only", () => {
    const lists = collectFileLists([
      fact("assistant", { toolCalls: [call("1", "read", { path: "a.ts" }), call("2", "read", { path: "b.ts" })] }),
      fact("assistant", { toolCalls: [call("3", "edit", { path: "b.ts" }), call("4", "write", { path: "c.ts" })] }),
    ]);
    expect(lists).toEqual({ read: ["a.ts"], modified: ["b.ts", "c.ts"] });
  });

  it("does not count a call whose result reports an error", () => {
    const lists = collectFileLists([
      fact("assistant", { toolCalls: [call("1", "edit", { path: "a.ts" }), call("2", "read", { path: "b.ts" })] }),
      fact("toolResult", { toolResultIds: ["1"], isError: true }),
      fact("toolResult", { toolResultIds: ["2"], isError: true }),
    ]);
    expect(lists).toEqual({ read: [], modified: [] });
  });

  it("pairs a reused call id with the nearest earlier call", () => {
    const lists = collectFileLists([
      fact("assistant", { toolCalls: [call("call_0", "edit", { path: "a.ts" })] }),
      fact("toolResult", { toolResultIds: ["call_0"] }),
      fact("assistant", { toolCalls: [call("call_0", "edit", { path: "b.ts" })] }),
      fact("toolResult", { toolResultIds: ["call_0"], isError: true }),
    ]);
    expect(lists).toEqual({ read: [], modified: ["a.ts"] });
  });

  it("starts from the lists of an earlier summary among the messages", () => {
    const lists = collectFileLists([
      fact("summary", { text: "## Files\n### Read\n- `old-read.ts`\n### Modified\n- `old-mod.ts`" }),
      fact("assistant", { toolCalls: [call("1", "edit", { path: "old-read.ts" })] }),
    ]);
    expect(lists).toEqual({ read: [], modified: ["old-mod.ts", "old-read.ts"] });
  });
});

describe("fileListsOfSummary", () => {
  it("reads the Files section of a structured summary", () => {
    expect(fileListsOfSummary("## Goal\n- x\n\n## Files\n### Read\n- `a.ts`\n### Modified\n- `b.ts`")).toEqual({
      read: ["a.ts"],
      modified: ["b.ts"],
    });
  });

  it("reads pi's read-files and modified-files tags", () => {
    const text = "Summary prose.\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\nc.ts\n</modified-files>";
    expect(fileListsOfSummary(text)).toEqual({ read: ["a.ts"], modified: ["b.ts", "c.ts"] });
  });

  it("finds no files in prose", () => {
    expect(fileListsOfSummary("We talked about a.ts.")).toEqual({ read: [], modified: [] });
  });
});
