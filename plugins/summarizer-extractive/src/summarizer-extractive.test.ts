import {
  CompactionError,
  type CompactionPlugin,
  Compactor,
  createEstimateCounter,
  createPiAdapter,
  ErrorCodes,
  type PiMessage,
  type Summarizer,
  summarizeCut,
} from "@compaction/core";
import { describe, expect, it } from "vitest";
import { EXTRACTIVE_DEFAULT_LIMITS } from "./extractive.js";
import { SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA } from "./options.js";
import { PLUGIN_NAME, summarizerExtractive } from "./summarizer-extractive.js";

const model: Summarizer = { name: "model", summarize: async () => "## Goal\n- from the model" };
const installsModel: CompactionPlugin = { name: "model", apply: (compactor) => void (compactor.summarizer = model) };

/** Cuts before the last message and summarises the rest with the compactor's summarizer. */
const summarizing: CompactionPlugin = {
  name: "summarizing",
  apply(compactor) {
    compactor.hooks.selectCut.tap("summarizing", (run) => ({ firstKeptIndex: run.messages.length - 1 }));
    compactor.hooks.summarize.tapPromise("summarizing", async (draft, run) => ({ ...draft, text: await summarizeCut(run) }));
  },
};

function compactor(plugins: CompactionPlugin[]): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins, contextWindow: 100_000 });
}

const user = (text: string): PiMessage => ({ role: "user", content: text, timestamp: 1 }) as PiMessage;
/**
 * A tool call reading a file and its output: history longer than its summary, so a run that
 * compacts it is written (the core refuses a compaction that would not make the context smaller).
 */
const readingAFile = (): PiMessage[] => [
  { role: "assistant", content: [{ type: "toolCall", id: "r1", name: "read", arguments: { path: "src/parse.ts" } }], stopReason: "toolUse", timestamp: 2 } as PiMessage,
  { role: "toolResult", toolCallId: "r1", toolName: "read", content: [{ type: "text", text: "export function parse(input) { return input; }\n".repeat(30) }], isError: false, timestamp: 3 } as PiMessage,
];

function optionsError(options: unknown): CompactionError {
  try {
    summarizerExtractive(options as never);
  } catch (error) {
    if (error instanceof CompactionError) return error;
    throw error;
  }
  throw new Error("expected the factory to throw");
}

describe("summarizer-extractive plugin", () => {
  it("installs the extractive summarizer on a compactor that has none, and a run then writes its summary", async () => {
    const c = compactor([summarizing, summarizerExtractive()]);
    expect(c.summarizer.name).toBe("extractive");
    const result = await c.compact({ messages: [user("Fix the parser in src/parse.ts, please."), ...readingAFile(), user("and now the lexer")] });
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.summary).toContain("## Goal");
    expect(result.summary).toContain("Fix the parser in src/parse.ts");
  });

  it("leaves a summarizer installed before it in place (a model summarizer in the config's plugins, the preset's extractive after it)", () => {
    expect(compactor([installsModel, summarizerExtractive()]).summarizer).toBe(model);
  });

  it("is replaced by a model summarizer applied after it", () => {
    expect(compactor([summarizerExtractive(), installsModel]).summarizer).toBe(model);
  });

  it("keeps a summarizer given to new Compactor()", () => {
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), summarizer: model, plugins: [summarizerExtractive()] });
    expect(c.summarizer).toBe(model);
  });

  it("publishes its options with the defaults filled in, the extractive summarizer's own defaults", () => {
    const plugin = summarizerExtractive({ maxItemsPerSection: 5 });
    expect(plugin.name).toBe(PLUGIN_NAME);
    expect(plugin.options).toEqual({ ...EXTRACTIVE_DEFAULT_LIMITS, maxItemsPerSection: 5 });
    const properties = SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA.properties;
    expect({
      maxItemsPerSection: properties.maxItemsPerSection.default,
      maxFilesPerList: properties.maxFilesPerList.default,
      maxIdentifiers: properties.maxIdentifiers.default,
      maxItemChars: properties.maxItemChars.default,
    }).toEqual(EXTRACTIVE_DEFAULT_LIMITS);
  });

  it("summarises with the options it was given", async () => {
    const c = compactor([summarizing, summarizerExtractive({ maxItemChars: 40 })]);
    const long = "Rewrite the tokenizer so that it streams its input and never holds the whole file in memory at once.";
    const result = await c.compact({ messages: [user(long), ...readingAFile(), user("ok")] });
    expect(result.status, result.reason ?? "").toBe("compacted");
    const goal = (result.summary ?? "").split("\n").find((line) => line.startsWith("- Rewrite"));
    expect(goal?.length).toBeLessThanOrEqual(42);
    expect(goal?.endsWith("…")).toBe(true);
  });

  it.each([
    [{ maxItemsPerSection: 0 }, "/maxItemsPerSection"],
    [{ maxItemChars: 39 }, "/maxItemChars"],
    [{ maxIdentifiers: 1.5 }, "/maxIdentifiers"],
    [{ maxFiles: 3 }, ""],
  ])("rejects %j with COMPACTION_PLUGIN_OPTIONS_INVALID naming the plugin and the option", (options, path) => {
    const error = optionsError(options);
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.message).toContain(`Invalid options for plugin '${PLUGIN_NAME}'`);
    if (path !== "") expect(error.path).toBe(path);
    else expect(error.message).toContain("maxFiles");
  });

  it("has a closed, plain-JSON options schema", () => {
    expect(SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA.additionalProperties).toBe(false);
    expect(JSON.parse(JSON.stringify(SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA))).toEqual(SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA);
  });
});
