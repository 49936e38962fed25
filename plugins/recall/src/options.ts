/**
 * Options of the recall plugin: a plain draft-07 JSON Schema (copied into the core's config
 * schema, so keep it JSON-compatible) and the matching TypeScript type.
 */

/** JSON Schema of `recall(options)`; every property has a description and a default. */
export const RECALL_OPTIONS_SCHEMA = {
  title: "recall",
  description:
    "Options of @compaction/plugin-recall: a full-text index of every message of the session (evicted and summarised ones too), searched by the agent through a memory_search tool.",
  type: "object",
  additionalProperties: false,
  properties: {
    toolName: {
      description:
        "Name of the search tool the agent calls, and the capability this plugin provides (rolling's recallTool looks it up, and names it in its eviction note).",
      type: "string",
      pattern: "^[a-zA-Z0-9_-]{1,64}$",
      default: "memory_search",
    },
    limit: {
      description: "Results a search returns when the agent does not ask for a number.",
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 5,
    },
    maxLimit: {
      description: "Most results one search may return, whatever the agent asks for.",
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 20,
    },
    snippetChars: {
      description: "Length of the snippet shown for each result: a window of the entry's text around the first matching word.",
      type: "integer",
      minimum: 40,
      maximum: 2000,
      default: 200,
    },
    maxEntryChars: {
      description:
        "Longest text returned when the agent fetches a whole entry by id; longer entries are cut there and say how much was left out.",
      type: "integer",
      minimum: 200,
      default: 20000,
    },
    indexDir: {
      description:
        "Folder for the index files, each named after its session file (<session file name>.recall.json). null: next to the session file.",
      type: ["string", "null"],
      minLength: 1,
      default: null,
    },
    saveAfterBytes: {
      description:
        "Transcript bytes indexed since the last save after which an update writes the index file again. 0: after every update that indexed something. Unsaved entries are never lost: the next open reads them again from the transcript.",
      type: "integer",
      minimum: 0,
      default: 0,
    },
  },
} as const;

/** The options after validation, defaults filled in. */
export interface RecallOptions {
  readonly toolName: string;
  readonly limit: number;
  readonly maxLimit: number;
  readonly snippetChars: number;
  readonly maxEntryChars: number;
  readonly indexDir: string | null;
  readonly saveAfterBytes: number;
}

/** What `recall(options)` accepts: any subset of the options. */
export type RecallOptionsInput = Partial<RecallOptions>;

/** The defaults, as the schema states them. */
export const RECALL_DEFAULTS: RecallOptions = Object.freeze({
  toolName: RECALL_OPTIONS_SCHEMA.properties.toolName.default,
  limit: RECALL_OPTIONS_SCHEMA.properties.limit.default,
  maxLimit: RECALL_OPTIONS_SCHEMA.properties.maxLimit.default,
  snippetChars: RECALL_OPTIONS_SCHEMA.properties.snippetChars.default,
  maxEntryChars: RECALL_OPTIONS_SCHEMA.properties.maxEntryChars.default,
  indexDir: RECALL_OPTIONS_SCHEMA.properties.indexDir.default,
  saveAfterBytes: RECALL_OPTIONS_SCHEMA.properties.saveAfterBytes.default,
});
