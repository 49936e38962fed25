/**
 * `memory_search`, the tool an agent recalls its own history with: one JSON-Schema definition in
 * the shapes OpenAI, Anthropic and pi-coding-agent take, and one handler. The agent searches
 * with `query` and reads a whole entry with `entryId`; both stay on the current branch.
 */
import { describeError } from "@compaction/core";
import type { RecallEntry, RecallHit } from "./recall-index.js";
import type { RecallSource } from "./store-recall-index.js";
import { RECALL_DEFAULTS } from "./options.js";
import { memorySearchParameters, parseMemorySearchArgs } from "./tool-args.js";

export interface MemorySearchToolOptions {
  /** The tool's name. Default `memory_search`. */
  readonly name?: string;
  /** Results when the agent asks for no number. Default 5. */
  readonly limit?: number;
  /** Most results per search. Default 20. */
  readonly maxLimit?: number;
  /** Longest entry text returned by `entryId`. Default 20,000 characters. */
  readonly maxEntryChars?: number;
  /** The branch the agent is on: its leaf entry id. Default: the transcript's last entry. */
  readonly leafId?: () => string | null | undefined;
}

/** The JSON Schema of the arguments. */
export type MemorySearchParameters = ReturnType<typeof memorySearchParameters>;

/** OpenAI Chat Completions `tools[]` entry. */
export interface OpenAIToolDefinition {
  readonly type: "function";
  readonly function: { readonly name: string; readonly description: string; readonly parameters: MemorySearchParameters };
}

/** Anthropic Messages `tools[]` entry. */
export interface AnthropicToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly input_schema: MemorySearchParameters;
}

/** What a pi tool returns: text for the model, details for logs and UI. */
export interface PiToolResult {
  content: { type: "text"; text: string }[];
  details: MemorySearchDetails;
}

/**
 * pi-agent-core's `AgentTool` (and pi-coding-agent's extension `ToolDefinition`), structurally:
 * pi validates the arguments against `parameters` (plain JSON Schema works) and turns a thrown
 * error into an error result for the model.
 */
export interface PiToolDefinition {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly parameters: MemorySearchParameters;
  execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<PiToolResult>;
}

export type MemorySearchDetails = { readonly hits: readonly RecallHit[] } | { readonly entry: Omit<RecallEntry, "entry"> };

/** The handler's answer: `text` is what the model should see. */
export type MemorySearchResult =
  | { readonly kind: "search"; readonly isError: false; readonly text: string; readonly hits: readonly RecallHit[] }
  | { readonly kind: "entry"; readonly isError: false; readonly text: string; readonly entry: RecallEntry }
  | { readonly kind: "error"; readonly isError: true; readonly text: string };

export interface MemorySearchTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: MemorySearchParameters;
  readonly definition: {
    readonly openai: OpenAIToolDefinition;
    readonly anthropic: AnthropicToolDefinition;
    readonly pi: PiToolDefinition;
  };
  /** Runs one call with the arguments the model sent (an object, or its JSON text). Never throws. */
  handle(args: unknown): Promise<MemorySearchResult>;
}

/**
 * The memory_search tool over a session's recall index: a session file's (`openRecallIndex`) or a
 * session store's (`openStoreRecallIndex`); the tool's text and ids are the same for both.
 */
export function memorySearchTool(index: Pick<RecallSource, "search" | "get">, options: MemorySearchToolOptions = {}): MemorySearchTool {
  const name = options.name ?? RECALL_DEFAULTS.toolName;
  const maxLimit = options.maxLimit ?? RECALL_DEFAULTS.maxLimit;
  const limits = { limit: Math.min(options.limit ?? RECALL_DEFAULTS.limit, maxLimit), maxLimit };
  const maxEntryChars = options.maxEntryChars ?? RECALL_DEFAULTS.maxEntryChars;
  const parameters = memorySearchParameters(limits);
  const description = memorySearchDescription(name);

  async function handle(args: unknown): Promise<MemorySearchResult> {
    const parsed = parseMemorySearchArgs(args, limits, name);
    if ("error" in parsed) return { kind: "error", isError: true, text: parsed.error };
    const leafId = options.leafId?.();
    try {
      if (parsed.kind === "get") {
        const entry = await index.get(parsed.entryId, leafId === undefined ? {} : { leafId });
        if (entry === undefined) {
          return { kind: "error", isError: true, text: `No entry "${parsed.entryId}" in this session's transcript. Use an entry id from a ${name} result.` };
        }
        if (!entry.onBranch) {
          return { kind: "error", isError: true, text: `Entry "${parsed.entryId}" is on another branch of this session, not the current one; it is not part of this conversation.` };
        }
        return { kind: "entry", isError: false, text: renderEntry(entry, maxEntryChars), entry };
      }
      const hits = await index.search(parsed.query, { limit: parsed.limit, ...(leafId === undefined ? {} : { leafId }) });
      const note = parsed.capped ? ` (limit capped at ${maxLimit})` : "";
      return { kind: "search", isError: false, text: renderHits(parsed.query, hits, name, note), hits };
    } catch (error) {
      return { kind: "error", isError: true, text: `${name} could not read the session's history: ${describeError(error)}` };
    }
  }

  const pi: PiToolDefinition = {
    name,
    label: "Memory search",
    description,
    parameters,
    async execute(_toolCallId, params) {
      const result = await handle(params);
      if (result.isError) throw new Error(result.text);
      const details: MemorySearchDetails = result.kind === "search" ? { hits: result.hits } : { entry: withoutRaw(result.entry) };
      return { content: [{ type: "text", text: result.text }], details };
    },
  };

  return {
    name,
    description,
    parameters,
    definition: {
      openai: { type: "function", function: { name, description, parameters } },
      anthropic: { name, description, input_schema: parameters },
      pi,
    },
    handle,
  };
}

/** What the tool tells the agent it does, for a tool named `name` (the same text `memorySearchTool` gives it). */
export function memorySearchDescription(name: string): string {
  return [
    "Search the full transcript of this session, including earlier messages that are no longer in your context (evicted or summarised by compaction).",
    "Returns the best matching entries, best first, each with its entry id, time, role and a snippet.",
    `To read one entry in full, call ${name} with {"entryId": "<id>"} from a result.`,
  ].join(" ");
}

function renderHits(query: string, hits: readonly RecallHit[], name: string, note: string): string {
  if (hits.length === 0) {
    return `No entries on the current branch match ${JSON.stringify(query)}. Try other words: names of files, functions, commands or error messages work well.`;
  }
  const blocks = hits.map((hit, i) => `${i + 1}. entry ${hit.entryId} · ${hit.role} · ${hit.timestamp || "no time"}\n   ${hit.snippet}`);
  return [
    `${hits.length} ${hits.length === 1 ? "entry matches" : "entries match"} ${JSON.stringify(query)} on the current branch, best first${note}:`,
    "",
    blocks.join("\n\n"),
    "",
    `Read a whole entry with ${name}({"entryId": "<id>"}).`,
  ].join("\n");
}

function renderEntry(entry: RecallEntry, maxChars: number): string {
  const head = `Entry ${entry.entryId} · ${entry.role || entry.entry.type} · ${entry.timestamp || "no time"} · line ${entry.line}`;
  if (entry.text === "") return `${head}\n(no text: a ${entry.entry.type} entry)`;
  if (entry.text.length <= maxChars) return `${head}\n${entry.text}`;
  const left = entry.text.length - maxChars;
  return `${head}\n${entry.text.slice(0, maxChars)}\n[… ${left} more characters not shown]`;
}

function withoutRaw(entry: RecallEntry): Omit<RecallEntry, "entry"> {
  const { entry: _raw, ...rest } = entry;
  return rest;
}
