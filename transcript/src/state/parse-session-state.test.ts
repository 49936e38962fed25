/** parseSessionState: round trips, and one clear SESSION_STATE_INVALID error per kind of problem. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompactionError, createEstimateCounter, ErrorCodes, type SessionState } from "@compaction/core";
import { extractSessionState } from "@compaction/plugin-summarizer-extractive";
import { builders } from "@compaction/core/testing";
import { parseSessionState } from "./parse-session-state.js";

const FILE = "/tmp/state.json";
const b = builders("anthropic");
const state: SessionState = extractSessionState(
  [
    b.user("Add retries to the fetch client. Never retry POST requests."),
    b.assistant("Reading it.", [{ id: "r1", name: "Read", args: { file_path: "src/fetch.ts" } }]),
    ...b.toolResults([{ id: "r1", text: "export async function get() {}" }]),
    b.assistant("Editing.", [{ id: "e1", name: "Edit", args: { file_path: "src/fetch.ts", old_string: "a", new_string: "b" } }]),
    ...b.toolResults([{ id: "e1", text: "Error: old_string not found", isError: true }]),
    b.assistant("The edit failed; next I will re-read the file."),
  ],
  b.adapter,
  {
    source: { session: "abc", path: "/s.jsonl", format: "claude-code", cwd: "/app", leafEntryId: null },
    counter: createEstimateCounter(),
    now: new Date("2026-01-02T03:04:05.000Z"),
  },
);

/** The CompactionError `run` throws; fails the test when it throws nothing or something else. */
function thrown(run: () => unknown): CompactionError {
  try {
    run();
  } catch (error) {
    if (error instanceof CompactionError) return error;
    throw error;
  }
  throw new Error("expected a CompactionError");
}

const edited = (edit: (doc: Record<string, any>) => void): string => {
  const doc = JSON.parse(JSON.stringify(state)) as Record<string, any>;
  edit(doc);
  return JSON.stringify(doc, null, 2);
};

describe("parseSessionState on valid documents", () => {
  it("returns what extractSessionState wrote, after JSON.stringify, unchanged", () => {
    expect(state.toolOperations.tools).toEqual([
      { name: "Edit", calls: 1, failed: 1 },
      { name: "Read", calls: 1, failed: 0 },
    ]);
    expect(parseSessionState(JSON.stringify(state), FILE)).toEqual(state);
  });

  it("accepts pretty-printed JSON with a byte order mark-free leading newline", () => {
    expect(parseSessionState(`\n${JSON.stringify(state, null, 4)}\n`)).toEqual(state);
  });
});

describe("parseSessionState errors", () => {
  it("names the file, line and column of a JSON syntax error", () => {
    const text = `{\n  "format": "compaction-session-state",\n  "version": 1,\n}`;
    const error = thrown(() => parseSessionState(text, FILE));
    expect(error.code).toBe(ErrorCodes.SESSION_STATE_INVALID);
    expect(error.file).toBe(FILE);
    expect(error.message).toMatch(/^Cannot read session state \/tmp\/state\.json: not valid JSON at line 4, column 1: /);
    expect(error.hint).toMatch(/Fix the JSON syntax/);
  });

  it("names the end of a cut-short document", () => {
    const text = JSON.stringify(state).slice(0, 40);
    expect(thrown(() => parseSessionState(text, FILE)).message).toMatch(/not valid JSON at line 1, column 41/);
  });

  it("says a JSON value that is not an object was found", () => {
    const error = thrown(() => parseSessionState("[1, 2]", FILE));
    expect(error.message).toBe("Invalid session state /tmp/state.json: (top level): expected a JSON object, found an array of 2 items.");
    expect(error.hint).toBe("Export the session again with `compaction context export <file>`.");
  });

  it("says a document of another format is not a session state, naming the format found", () => {
    const error = thrown(() => parseSessionState(JSON.stringify({ type: "session", version: 3, id: "x" }), FILE));
    expect(error.path).toBe("/format");
    expect(error.message).toMatch(/^\/tmp\/state\.json is not a compaction session state: expected "format": "compaction-session-state", found nothing\./);
  });

  it("says a newer version needs a newer compaction, before checking anything else", () => {
    const error = thrown(() => parseSessionState(edited((doc) => ((doc["version"] = 2), (doc["novel"] = true))), FILE));
    expect(error.path).toBe("/version");
    expect(error.message).toMatch(/is a session state of version 2, written by a newer compaction; this one reads version 1/);
    expect(error.hint).toMatch(/Update @compaction\/core/);
  });

  it.each<[string, (doc: Record<string, any>) => void, string, RegExp]>([
    ["a missing field", (doc) => delete doc["openTasks"], "/openTasks", /missing required property 'openTasks' \(what is still to do: .*\)\. Add 'openTasks' \(\[\] when there is nothing to list\)/],
    ["a misspelt field", (doc) => ((doc["sumary"] = doc["summary"]), delete doc["summary"]), "/sumary", /unknown property 'sumary'.*Did you mean 'summary'\?/s],
    ["a wrong type deep inside", (doc) => (doc["toolOperations"]["tools"][1]["calls"] = "1"), "/toolOperations/tools/1/calls", /expected a whole number, found string "1"/],
    ["an unknown source format", (doc) => (doc["source"]["format"] = "claude_code"), "/source/format", /expected one of "pi", "claude-code", "codex", "messages", found string "claude_code"\. Did you mean 'claude-code'\?/],
    ["a time that is not ISO 8601", (doc) => (doc["exportedAt"] = "Jan 2"), "/exportedAt", /expected an ISO 8601 time, found string "Jan 2"/],
    ["version 0", (doc) => (doc["version"] = 0), "/version", /expected 1, found integer 0/],
    ["more failed calls than calls", (doc) => (doc["toolOperations"]["tools"][0]["failed"] = 5), "/toolOperations/tools/0/failed", /expected at most 'calls' \(1\) failed calls, found integer 5/],
  ])("reports %s with its JSON path, what was expected and found", (_name, edit, path, message) => {
    const error = thrown(() => parseSessionState(edited(edit), FILE));
    expect(error.code).toBe(ErrorCodes.SESSION_STATE_INVALID);
    expect(error.path).toBe(path);
    expect(error.message.startsWith(`Invalid session state ${FILE}: ${path}: `)).toBe(true);
    // What was expected and found in the message, what to do in the hint (said once, not twice).
    expect(`${error.message} ${error.hint}`).toMatch(message);
    expect(error.hint?.length).toBeGreaterThan(0);
    expect(error.message).not.toContain(error.hint as string);
  });

  it("lists every problem, one a line, when there are several", () => {
    const error = thrown(() => parseSessionState(edited((doc) => ((doc["goal"] = "x"), (doc["done"] = 3))), FILE));
    expect(error.message).toBe(
      [
        `Invalid session state ${FILE}: 2 problems:`,
        "  /goal: expected an array, found string \"x\". Use an array.",
        "  /done: expected an array, found integer 3. Use an array.",
      ].join("\n"),
    );
    expect(error.path).toBe("/goal");
  });

  it("leaves the file out of the message when none is given", () => {
    const error = thrown(() => parseSessionState(edited((doc) => (doc["summary"] = 1))));
    expect(error.message).toBe("Invalid session state: /summary: expected a string, found integer 1.");
    expect(error.file).toBeUndefined();
  });
});

/** Every value in the document with its JSON pointer (containers and leaves). */
function pointers(value: unknown, at = ""): [string, unknown][] {
  const here: [string, unknown][] = at === "" ? [] : [[at, value]];
  if (Array.isArray(value)) return [...here, ...value.flatMap((child, i) => pointers(child, `${at}/${i}`))];
  if (typeof value === "object" && value !== null) return [...here, ...Object.entries(value).flatMap(([k, child]) => pointers(child, `${at}/${k}`))];
  return here;
}

const jsonType = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

describe("parseSessionState, a value of the wrong type anywhere", () => {
  const targets = pointers(state);

  it("is reported at exactly that value's JSON path, in a message naming the file and path", () => {
    const replacements = fc.constantFrom<unknown>(true, 7, "text", [], {}, [1]);
    fc.assert(
      fc.property(fc.constantFrom(...targets), replacements, ([pointer, original], replacement) => {
        fc.pre(jsonType(replacement) !== jsonType(original));
        // Nullable fields take null and strings: replacing one kind with the other is not wrong.
        fc.pre(!(original === null && typeof replacement === "string"));
        const doc = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
        const segments = pointer.slice(1).split("/");
        const last = segments.pop() as string;
        const parent = segments.reduce<any>((node, key) => node[key], doc);
        parent[last] = replacement;
        const error = thrown(() => parseSessionState(JSON.stringify(doc), FILE));
        expect(error.code).toBe(ErrorCodes.SESSION_STATE_INVALID);
        expect(error.path).toBe(pointer);
        expect(error.message).toContain(FILE);
        expect(error.message).toContain(`${pointer === "/format" ? "format" : pointer}`);
      }),
      { numRuns: 300 },
    );
  });
});
