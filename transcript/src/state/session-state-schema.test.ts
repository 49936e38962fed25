/**
 * The shipped session-state JSON Schema: its shape (descriptions, closed objects, required
 * fields), that it accepts what extractSessionState writes on the real transcripts, that it
 * rejects broken documents, and that the package exports it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createAnthropicAdapter, createEstimateCounter, createPiAdapter, type SessionState } from "@compaction/core";
import { extractSessionState } from "@compaction/plugin-summarizer-extractive";
import { builders } from "@compaction/core/testing";
import { importClaudeCode } from "../claude-code-import.js";
import { buildContext } from "../context.js";
import { readSession } from "../parse.js";
import { sessionStateSchema, sessionStateSchemaPath, validateSessionStateData } from "./session-state-schema.js";

const REAL = fileURLToPath(new URL("../../../../shared/fixtures/real/", import.meta.url));
const counter = createEstimateCounter();
type Schema = Record<string, any>;

/** Every subschema with its JSON-pointer-like location, root first. */
function walk(schema: Schema, at = "#"): [string, Schema][] {
  const found: [string, Schema][] = [[at, schema]];
  for (const [name, child] of Object.entries((schema["properties"] ?? {}) as Record<string, Schema>)) found.push(...walk(child, `${at}/${name}`));
  if (schema["items"] !== undefined) found.push(...walk(schema["items"] as Schema, `${at}/items`));
  return found;
}

function realStates(): [string, SessionState][] {
  const states: [string, SessionState][] = [];
  for (const file of ["pi-large-session.jsonl", "pi-before-compaction.jsonl"]) {
    const session = readSession(REAL + file);
    const context = buildContext(session.entries);
    const source = { session: session.header.id, path: REAL + file, format: "pi", cwd: session.header.cwd ?? null, leafEntryId: context.leafId } as const;
    states.push([file, extractSessionState(context.messages, createPiAdapter(), { source, counter })]);
  }
  for (const file of [
    "claude-code-log-37f83ec9.jsonl",
    "claude-code-deep-manifest-a7da6a22.jsonl",
    "claude-code-worktrees-ef958aa1.jsonl",
    "claude-code-viewer-fe5e1c67.jsonl",
    "claude-code-log-fe869ecb.jsonl",
    "claude-code-me-next-9e953218.jsonl",
    "claude-code-soundrecorder-7acd37a8.jsonl",
    "claude-code-entire-review-847ff7d2.jsonl",
    "claude-code-entire-attribution-6113e919.jsonl",
    "claude-code-entire-openclaw-ca8cc13b.jsonl",
  ]) {
    const imported = importClaudeCode(REAL + file);
    const source = { session: imported.sessionId ?? null, path: REAL + file, format: "claude-code", cwd: imported.cwd ?? null, leafEntryId: null } as const;
    states.push([file, extractSessionState(imported.messages, createAnthropicAdapter(), { source, counter })]);
  }
  return states;
}

/** The property names of an object value and of its nested objects, as pointer-like paths. */
function keyPaths(value: unknown, at = "#"): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [] : keyPaths(value[0], `${at}/items`);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => [`${at}/${key}`, ...keyPaths(child, `${at}/${key}`)]);
}

describe("session-state.schema.json, its shape", () => {
  const nodes = walk(sessionStateSchema as Schema);

  it("is a draft-07 schema", () => {
    expect(sessionStateSchema["$schema"]).toBe("http://json-schema.org/draft-07/schema#");
  });

  it("describes every property and item", () => {
    expect(nodes.filter(([, node]) => typeof node["description"] !== "string" || node["description"] === "").map(([at]) => at)).toEqual([]);
  });

  it("closes every object (additionalProperties false) and requires all of its properties but the two added to version 1 later", () => {
    // currentTask and plan came with the handover summary; documents exported before lack them and stay valid.
    const addedLater = new Set(["currentTask", "plan"]);
    const objects = nodes.filter(([, node]) => node["properties"] !== undefined);
    expect(objects.length).toBe(6);
    for (const [at, node] of objects) {
      expect({ at, additional: node["additionalProperties"] }).toEqual({ at, additional: false });
      const expected = Object.keys(node["properties"]).filter((key) => at !== "#" || !addedLater.has(key));
      expect({ at, required: [...(node["required"] as string[])].sort() }).toEqual({ at, required: expected.sort() });
    }
  });

  it("accepts a version-1 document written before currentTask and plan existed", () => {
    const b = builders("pi");
    const state = extractSessionState([b.user("go"), b.assistant("ok")], b.adapter, {
      source: { session: null, path: null, format: "messages", cwd: null, leafEntryId: null },
      counter,
    });
    const { currentTask: _task, plan: _plan, ...older } = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
    expect(validateSessionStateData(older)).toEqual([]);
    expect(validateSessionStateData({ ...older, plan: "not a list" })).not.toEqual([]);
  });

  it("has the same properties, at every level, as a document extractSessionState writes", () => {
    const b = builders("pi");
    const messages = [b.user("go"), b.assistant("ok", [{ id: "t1" }]), ...b.toolResults([{ id: "t1", text: "done" }])];
    const state = extractSessionState(messages, b.adapter, { source: { session: null, path: null, format: "messages", cwd: null, leafEntryId: null }, counter });
    // Array items add a path step "items" (only object items have keys: the tools list here).
    const schemaPaths = nodes.map(([at]) => at).filter((at) => at !== "#" && !at.endsWith("/items"));
    expect(state.toolOperations.tools).toHaveLength(1);
    expect(keyPaths(state).sort()).toEqual(schemaPaths.sort());
  });
});

describe("session-state.schema.json on real exports", () => {
  it.each(realStates())("accepts the state extracted from %s", (_file, state) => {
    expect(validateSessionStateData(JSON.parse(JSON.stringify(state)))).toEqual([]);
  });
});

describe("session-state.schema.json on broken documents", () => {
  const b = builders("openai");
  const valid = (): Record<string, any> =>
    JSON.parse(
      JSON.stringify(
        extractSessionState([b.user("fix it"), b.assistant("Done.", [{ id: "x1" }]), ...b.toolResults([{ id: "x1", text: "ok" }])], b.adapter, {
          source: { session: null, path: null, format: "messages", cwd: null, leafEntryId: null },
          counter,
        }),
      ),
    );

  it.each<[string, (doc: Record<string, any>) => void, string, string]>([
    ["a missing top-level field", (doc) => delete doc["summary"], "", "required"],
    ["an unknown top-level field", (doc) => (doc["extra"] = 1), "", "additionalProperties"],
    ["an unknown field inside source", (doc) => (doc["source"]["model"] = "gpt"), "/source", "additionalProperties"],
    ["an unknown source format", (doc) => (doc["source"]["format"] = "cursor"), "/source/format", "enum"],
    ["a negative message count", (doc) => (doc["source"]["messages"] = -1), "/source/messages", "minimum"],
    ["a fractional token count", (doc) => (doc["source"]["tokens"] = 1.5), "/source/tokens", "type"],
    ["a number in a string list", (doc) => (doc["goal"] = [42]), "/goal/0", "type"],
    ["files.modified as a string", (doc) => (doc["files"]["modified"] = "a.ts"), "/files/modified", "type"],
    ["a tool without a name", (doc) => (doc["toolOperations"]["tools"][0]["name"] = ""), "/toolOperations/tools/0/name", "minLength"],
    ["an exportedAt that is not an ISO time", (doc) => (doc["exportedAt"] = "yesterday"), "/exportedAt", "pattern"],
    ["a lastExchange timestamp that is not an ISO time", (doc) => (doc["lastExchange"]["timestamp"] = "3pm"), "/lastExchange/timestamp", "pattern"],
    ["another format mark", (doc) => (doc["format"] = "pi-session"), "/format", "const"],
    ["version 2", (doc) => (doc["version"] = 2), "/version", "const"],
  ])("rejects %s", (_name, mutate, instancePath, keyword) => {
    const doc = valid();
    expect(validateSessionStateData(doc)).toEqual([]);
    mutate(doc);
    const errors = validateSessionStateData(doc);
    expect(errors.map((e) => [e.instancePath, e.keyword])).toContainEqual([instancePath, keyword]);
  });

  it("accepts null for every nullable source field and for the last exchange", () => {
    const doc = valid();
    doc["source"] = { ...doc["source"], session: null, path: null, cwd: null, leafEntryId: null };
    doc["lastExchange"] = { user: null, assistant: null, timestamp: null };
    expect(validateSessionStateData(doc)).toEqual([]);
  });
});

describe("session-state.schema.json in the package", () => {
  const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    exports: Record<string, unknown>;
    files: string[];
  };

  it("is exported as @compaction/transcript/session-state.schema.json, pointing at the file the validator loads", () => {
    const target = packageJson.exports["./session-state.schema.json"];
    expect(target).toBe("./schema/session-state.schema.json");
    expect(fileURLToPath(new URL(`../../${String(target)}`, import.meta.url))).toBe(sessionStateSchemaPath);
  });

  it("sits in a folder the package publishes", () => {
    expect(packageJson.files).toContain("schema");
  });
});
