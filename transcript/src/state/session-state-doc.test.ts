/**
 * docs/session-state.md's example is an export of the shipped session with its lists trimmed to
 * their newest items: it must still parse as a session state, and say what an export of that
 * session says today.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createPiAdapter, createTiktokenCounter } from "@compaction/core";
import { extractSessionState } from "@compaction/plugin-summarizer-extractive";
import { buildContext } from "../context.js";
import { readSession } from "../parse.js";
import { parseSessionState } from "./parse-session-state.js";

const DOC = fileURLToPath(new URL("../../../docs/session-state.md", import.meta.url));
const SHIPPED = fileURLToPath(new URL("../../../examples/sessions/pi-large-session.jsonl", import.meta.url));
const counter = createTiktokenCounter();
afterAll(() => counter.dispose());

const markdown = readFileSync(DOC, "utf8");
const exampleText = /## Example[\s\S]*?```json\n([\s\S]*?)```/.exec(markdown)?.[1] ?? "";

describe("docs/session-state.md's example", () => {
  const example = parseSessionState(exampleText, DOC);
  const session = readSession(SHIPPED);
  const context = buildContext(session.entries);
  const state = extractSessionState(context.messages, createPiAdapter(), {
    source: { session: session.header.id, path: SHIPPED, format: "pi", cwd: session.header.cwd ?? null, leafEntryId: context.leafId },
    counter,
  });
  const tail = <T>(list: readonly T[], shown: readonly T[]): readonly T[] => list.slice(list.length - shown.length);

  it("parses as a session state", () => {
    expect(example.format).toBe("compaction-session-state");
  });

  it("shows what an export of the shipped session says today: its source, whole fields and the newest items of each list", () => {
    expect({ ...example.source, path: null }).toEqual({ ...state.source, path: null });
    expect(example.goal).toEqual(state.goal);
    expect(example.currentTask).toEqual(state.currentTask);
    expect(example.plan).toEqual(state.plan);
    expect(example.toolOperations.tools).toEqual(state.toolOperations.tools);
    for (const key of ["constraints", "decisions", "openTasks", "done", "identifiers"] as const) expect(example[key], key).toEqual(tail(state[key], example[key]));
    expect(example.files.read).toEqual(tail(state.files.read, example.files.read));
    expect(example.files.modified).toEqual(tail(state.files.modified, example.files.modified));
    expect(example.toolOperations.commands).toEqual(tail(state.toolOperations.commands, example.toolOperations.commands));
    expect(example.toolOperations.failed).toEqual(tail(state.toolOperations.failed, example.toolOperations.failed));
    expect(example.lastExchange.user).toBe(state.lastExchange.user);
    expect(state.lastExchange.assistant?.startsWith(example.lastExchange.assistant?.replace(/ …$/, "") ?? "")).toBe(true);
  });

  it("gives the real document's list lengths", () => {
    expect(markdown).toContain(`the real document has ${state.done.length} done items, ${state.toolOperations.commands.length} commands and ${state.identifiers.length} identifiers`);
  });
});
