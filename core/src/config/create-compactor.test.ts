import type { ResolvedConfig } from "./types.js";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Compactor } from "../compactor/compactor.js";
import { ErrorCodes } from "../errors.js";
import { createOpenAIAdapter } from "../messages/openai-adapter.js";
import type { PiMessage } from "../messages/pi-adapter.js";
import { assistant, user } from "../testing/pi-messages.js";
import { makeProject, recordingPluginSource, removeProjects } from "../testing/tmp-project.js";
import { ConfigError } from "./config-error.js";
import { createCompactor } from "./create-compactor.js";
import { loadConfig } from "./load-config.js";

const compactors: Array<Compactor<unknown>> = [];

afterEach(() => {
  for (const compactor of compactors.splice(0)) compactor.dispose();
  removeProjects();
});

/** A project whose preset (preset.mjs) lists the plugin in cut.mjs. */
function project(config: object, extra: Record<string, string> = {}): string {
  return makeProject({
    ".compactionrc.json": JSON.stringify({ preset: "./preset.mjs", ...config }),
    "preset.mjs": 'export default { plugins: [["./cut.mjs", { index: 1 }]] };\n',
    // Cuts at options.index and summarises the history with the configured summarizer.
    "cut.mjs": `export default function cut(options) {
  return {
    name: "cut",
    options,
    apply(compactor) {
      compactor.hooks.selectCut.tapPromise("cut", async () => ({ firstKeptIndex: options.index }));
      compactor.hooks.summarize.tapPromise("cut", async (draft, run) => ({
        ...draft,
        text: await run.summarize(run.historyMessages(), { maxTokens: 200 }),
      }));
    },
  };
}
`,
    ...extra,
  });
}

async function create<T = unknown>(cwd: string, agent?: string): Promise<Compactor<T>> {
  const compactor = await createCompactor<T>({ cwd, ...(agent === undefined ? {} : { agent }) });
  compactors.push(compactor as Compactor<unknown>);
  return compactor;
}

async function createError(cwd: string): Promise<ConfigError> {
  const error = await createCompactor({ cwd }).then(
    (compactor) => {
      compactors.push(compactor);
      return undefined;
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe("createCompactor", () => {
  it("keeps the resolved config as compactor.config", async () => {
    const root = project({ contextWindow: 50000, reserveTokens: 1000 });
    const compactor = await create(root);
    const config = compactor.config as ResolvedConfig;
    expect({ ...config, applied: null }).toEqual(await loadConfig({ cwd: root }));
    expect(config.applied?.preset).toEqual({ name: "./preset.mjs", request: "./preset.mjs", file: join(root, "preset.mjs") });
    expect(config.applied?.plugins).toEqual([
      {
        name: "cut",
        request: "./cut.mjs",
        file: join(root, "cut.mjs"),
        from: "preset",
        options: { index: 1 },
        given: { index: { value: 1, from: "preset", file: join(root, "preset.mjs"), path: "/plugins/0/1/index" } },
      },
    ]);
    expect(compactor.contextWindow).toBe(50000);
    expect(compactor.reserveTokens).toBe(1000);
  });

  it.each(["pi", "openai", "anthropic"])("uses the %s adapter the config names", async (adapter) => {
    const compactor = await create(project({ adapter }));
    expect(compactor.adapter.name).toBe(adapter);
  });

  it("reads messages with a MessageAdapter the caller passes, whatever the config names", async () => {
    const own = { ...createOpenAIAdapter(), name: "own-format" };
    const compactor = await createCompactor({ cwd: project({ adapter: "anthropic" }), adapter: own });
    compactors.push(compactor);
    expect(compactor.adapter).toBe(own);
  });

  it.each([
    [{ counter: "estimate" }, "estimate:chars/4"],
    [{ counter: "tiktoken", encoding: "cl100k_base" }, "tiktoken:cl100k_base"],
    [{}, "tiktoken:o200k_base"],
  ])("counts tokens with the tokenizer %j", async (tokenizer, name) => {
    const compactor = await create(project({ tokenizer }));
    expect(compactor.tokens.counter.name).toBe(name);
  });

  it("takes the auto-compaction threshold from the config, else the preset, else 0.8", async () => {
    const withPreset = (threshold: string) =>
      makeProject({
        ".compactionrc.json": JSON.stringify({ preset: "./preset.mjs" }),
        "preset.mjs": `export default { plugins: [], ${threshold} };\n`,
      });
    expect((await create(withPreset("autoCompact: { threshold: 0.9 }"))).autoCompact).toEqual({ enabled: true, threshold: 0.9 });
    expect((await create(withPreset("name: 'x'"))).autoCompact.threshold).toBe(0.8);
    const overridden = makeProject({
      ".compactionrc.json": JSON.stringify({ preset: "./preset.mjs", autoCompact: { enabled: false, threshold: 0.7 } }),
      "preset.mjs": "export default { plugins: [], autoCompact: { threshold: 0.9 } };\n",
    });
    expect((await create(overridden)).autoCompact).toEqual({ enabled: false, threshold: 0.7 });
  });

  it("uses the extractive summarizer by default: a preset that installs no summarizer gets the one summarizer.name names, applied last", async () => {
    const compactor = await create(project({}));
    expect(compactor.summarizer.name).toBe("extractive");
    expect(compactor.plugins.map((plugin) => plugin.name)).toEqual(["cut", "summarizer-extractive"]);
  });

  it("gives the configured summarizer the options the config keys by its short name", async () => {
    const compactor = await create(project({ options: { "summarizer-extractive": { maxItemsPerSection: 3 } } }));
    expect(compactor.plugins.at(-1)?.options).toMatchObject({ maxItemsPerSection: 3, maxFilesPerList: 50 });
  });

  it("applies no configured summarizer when a plugin installed one", async () => {
    const root = project({ plugins: ["./model.mjs"] }, {
      "model.mjs": 'export default () => ({ name: "model", apply(c) { c.summarizer = { name: "model", summarize: async () => "- s" }; } });\n',
    });
    const compactor = await create(root);
    expect(compactor.summarizer.name).toBe("model");
    expect(compactor.plugins.map((plugin) => plugin.name)).toEqual(["model", "cut"]);
  });

  it("applies the config's plugins before the preset's, in order", async () => {
    const root = project({ plugins: ["./first.mjs", "./second.mjs"] }, {
      "first.mjs": recordingPluginSource("first"),
      "second.mjs": recordingPluginSource("second"),
    });
    const compactor = await create(root);
    // The preset here lists no summarizer, so the configured one follows.
    expect(compactor.plugins.map((plugin) => plugin.name)).toEqual(["first", "second", "cut", "summarizer-extractive"]);
  });

  it("builds each agent's compactor from its own section", async () => {
    const root = project({ tokenizer: { counter: "estimate" }, agents: { big: { adapter: "openai", options: { cut: { index: 3 } } } } });
    const top = await create(root);
    const big = await create(root, "big");
    expect(top.adapter.name).toBe("pi");
    expect(big.adapter.name).toBe("openai");
    expect((big.plugins[0] as unknown as { options: unknown }).options).toEqual({ index: 3 });
    expect((top.plugins[0] as unknown as { options: unknown }).options).toEqual({ index: 1 });
  });

  it("compacts with the plugins and options the config names", async () => {
    const root = project({ tokenizer: { counter: "estimate" }, options: { cut: { index: 2 } } });
    const compactor = await create<PiMessage>(root);
    const messages = [user("first request about parsing"), assistant("parsed the file"), user("now write tests"), assistant("tests written")];
    const result = await compactor.compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.messages.slice(1)).toEqual(messages.slice(2));
    expect(result.summary).not.toBeNull();
  });

  it("rejects an unknown summarizer name, listing the known ones", async () => {
    const root = project({ summarizer: { name: "extractve" } });
    const error = await createError(root);
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    expect(error.path).toBe("/summarizer/name");
    expect(error.message).toContain("expected a known summarizer (extractive), found 'extractve'");
    expect(error.hint).toContain("Did you mean 'extractive'?");
  });

  it("rejects an unknown tiktoken encoding at its config path", async () => {
    const root = project({ tokenizer: { encoding: "o200k_bse" } });
    const error = await createError(root);
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.path).toBe("/tokenizer/encoding");
    expect(error.hint).toContain("Did you mean 'o200k_base'?");
  });

  it("counts through the countStore it is given with the tiktoken counter, and not with the estimate counter", async () => {
    const kept = new Map<string, number>();
    const store = { get: (counter: string, text: string) => kept.get(`${counter}|${text}`), set: (counter: string, text: string, count: number) => void kept.set(`${counter}|${text}`, count) };
    const tiktoken = await createCompactor({ cwd: project({}), countStore: store });
    compactors.push(tiktoken);
    expect(tiktoken.tokens.counter.count("counted once, then kept")).toBe(6);
    expect([...kept]).toEqual([["tiktoken:o200k_base|counted once, then kept", 6]]);
    kept.set("tiktoken:o200k_base|a kept count", 99);
    expect(tiktoken.tokens.counter.count("a kept count")).toBe(99);

    const estimate = await createCompactor({ cwd: project({ tokenizer: { counter: "estimate" } }), countStore: store });
    compactors.push(estimate);
    expect(estimate.tokens.counter.count("abcdefgh")).toBe(2);
    expect(kept.size).toBe(2);
  });

  it("keeps the tiktoken counter's encoder image in the store it is given, and none for the estimate counter", async () => {
    const images = new Map<string, Uint8Array>();
    const encoderImage = { read: (key: string) => images.get(key), write: (key: string, image: Uint8Array) => void images.set(key, image) };
    const estimate = await createCompactor({ cwd: project({ tokenizer: { counter: "estimate" } }), encoderImage });
    compactors.push(estimate);
    expect(estimate.tokens.counter.count("abcdefgh")).toBe(2);
    expect(images.size).toBe(0);

    const tiktoken = await createCompactor({ cwd: project({ tokenizer: { encoding: "p50k_base" } }), encoderImage });
    compactors.push(tiktoken);
    expect(tiktoken.tokens.counter.count("hello world")).toBe(2);
    expect([...images.keys()]).toEqual([expect.stringMatching(/^p50k_base-tiktoken-/)]);
  });

});
