/**
 * The arguments of the memory_search tool, as a JSON Schema for the model and as a check of
 * what the model actually sent (models send wrong arguments; the answer must say what is wrong).
 */

/** Search with `query`, or fetch one whole entry with `entryId`. */
export type MemorySearchArgs =
  | { readonly kind: "search"; readonly query: string; readonly limit: number; readonly capped: boolean }
  | { readonly kind: "get"; readonly entryId: string };

export interface ArgLimits {
  /** Results when the model gives no `limit`. */
  readonly limit: number;
  /** Most results; a larger `limit` is capped. */
  readonly maxLimit: number;
}

/** The JSON Schema of the tool's arguments (the same object for OpenAI, Anthropic and pi). */
export function memorySearchParameters(limits: ArgLimits) {
  return {
    type: "object",
    properties: {
      query: {
        type: "string",
        minLength: 1,
        description:
          "Words to look for in the session's earlier messages: names of files, functions, commands, errors, decisions. Best matches come first.",
      },
      entryId: {
        type: "string",
        minLength: 1,
        description: "Instead of searching, return this whole entry (an entry id from an earlier result).",
      },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: limits.maxLimit,
        description: `Most results to return (default ${limits.limit}, at most ${limits.maxLimit}).`,
      },
    },
    additionalProperties: false,
  } as const;
}

const KNOWN = new Set(["query", "entryId", "limit"]);

/** The checked arguments, or the text telling the model what to fix. */
export function parseMemorySearchArgs(args: unknown, limits: ArgLimits, toolName: string): MemorySearchArgs | { readonly error: string } {
  const example = `${toolName}({"query": "the failing test"}) or ${toolName}({"entryId": "<id from a result>"})`;
  let value = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      return { error: `Arguments must be a JSON object, but got the text ${JSON.stringify(truncate(args))}. Call ${example}.` };
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: `Arguments must be an object, but got ${describe(value)}. Call ${example}.` };
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !KNOWN.has(key));
  if (unknown.length > 0) {
    return { error: `Unknown argument${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `'${k}'`).join(", ")}: expected 'query', 'entryId' and/or 'limit'. Call ${example}.` };
  }
  const { query, entryId } = record;
  if (query !== undefined && entryId !== undefined) {
    return { error: `Give either 'query' (to search) or 'entryId' (to read one entry), not both. Call ${example}.` };
  }
  if (entryId !== undefined) {
    if (typeof entryId !== "string" || entryId.trim() === "") return { error: `'entryId' must be a non-empty string, but got ${describe(entryId)}.` };
    return { kind: "get", entryId: entryId.trim() };
  }
  if (query === undefined) return { error: `Missing 'query': say what to look for. Call ${example}.` };
  if (typeof query !== "string" || query.trim() === "") return { error: `'query' must be a non-empty string of words to look for, but got ${describe(query)}.` };
  const limit = parseLimit(record["limit"], limits);
  if ("error" in limit) return limit;
  return { kind: "search", query: query.trim(), ...limit };
}

function parseLimit(raw: unknown, limits: ArgLimits): { limit: number; capped: boolean } | { error: string } {
  if (raw === undefined || raw === null) return { limit: limits.limit, capped: false };
  const number = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1) {
    return { error: `'limit' must be a whole number from 1 to ${limits.maxLimit}, but got ${describe(raw)}.` };
  }
  return number > limits.maxLimit ? { limit: limits.maxLimit, capped: true } : { limit: number, capped: false };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(truncate(value));
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
