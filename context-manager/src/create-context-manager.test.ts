import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, ErrorCodes, type PiMessage, type ResolvedConfig } from "@compaction/core";
import { makeProject, removeProjects } from "@compaction/core/testing";
import { rejection } from "@compaction/core/testing";
import { user } from "@compaction/core/testing/pi";
import { exchange, piCompactor } from "./__fixtures__/compactors.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
  removeProjects();
});

/** A project whose preset keeps the newest exchange (the last two messages) and writes a fixed summary. */
function project(config: object): string {
  return makeProject({
    ".compactionrc.json": JSON.stringify({ preset: "./preset.mjs", tokenizer: { counter: "estimate" }, contextWindow: 1000, reserveTokens: 100, ...config }),
    "preset.mjs": 'export default { plugins: [["./keep.mjs", {}]] };\n',
    "keep.mjs": `export default function keep() {
  return {
    name: "keep",
    apply(compactor) {
      compactor.hooks.selectCut.tapPromise("keep", async (run) => ({ firstKeptIndex: Math.max(0, run.messages.length - 2) }));
      compactor.hooks.summarize.tapPromise("keep", async (draft) => ({ ...draft, text: "summary" }));
    },
  };
}
`,
  });
}

async function create(options: Parameters<typeof createContextManager<PiMessage>>[0]): Promise<ContextManager<PiMessage>> {
  const manager = await createContextManager<PiMessage>(options);
  managers.push(manager);
  return manager;
}

async function fillPastThreshold(manager: ContextManager<PiMessage>): Promise<void> {
  let turn = 0;
  while (manager.tokens <= manager.threshold) await manager.append(exchange(200, `fill${turn++}`));
}

describe("createContextManager from the config", () => {
  it("passes trusted: false on: the project's preset is not loaded, the data-only settings apply, a warning says so", async () => {
    const manager = await create({ cwd: project({}), trusted: false, trustHint: "Trust it in the host." });
    expect(manager.contextWindow).toBe(1000);
    const config = manager.compactor.config as ResolvedConfig;
    expect(config.warnings.map((warning) => warning.code)).toEqual([ErrorCodes.CONFIG_UNTRUSTED]);
    expect(config.warnings[0]?.hint).toContain("Trust it in the host.");
    expect(manager.compactor.plugins.map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
  });

  it("takes the context window and threshold from the config", async () => {
    const manager = await create({ cwd: project({ autoCompact: { threshold: 0.6 } }) });
    expect(manager.contextWindow).toBe(1000);
    expect(manager.threshold).toBe(600);
  });

  it("compacts automatically with the config's preset", async () => {
    const manager = await create({ cwd: project({}) });
    await fillPastThreshold(manager);
    expect((await manager.afterResponse())?.status).toBe("compacted");
  });

  it("does not compact automatically when the config turns autoCompact off, but compacts by hand", async () => {
    const manager = await create({ cwd: project({ autoCompact: { enabled: false } }) });
    expect(manager.autoCompact).toBe(false);
    await fillPastThreshold(manager);
    expect(await manager.afterResponse()).toBeNull();
    expect((await manager.compact()).status).toBe("compacted");
  });

  it("lets the autoCompact option override the config", async () => {
    const manager = await create({ cwd: project({ autoCompact: { enabled: false } }), autoCompact: true });
    expect(manager.autoCompact).toBe(true);
  });

  it("reads autoCompact.maxAutoCompactions from the config", async () => {
    const manager = await create({ cwd: project({ autoCompact: { maxAutoCompactions: 2 } }) });
    expect(manager.maxAutoCompactions).toBe(2);
  });

  it("applies the agent's section", async () => {
    const cwd = project({ agents: { coder: { contextWindow: 4000, autoCompact: { maxAutoCompactions: 7 } } } });
    const manager = await create({ cwd, agent: "coder" });
    expect(manager.contextWindow).toBe(4000);
    expect(manager.maxAutoCompactions).toBe(7);
  });

  it("rejects a maxAutoCompactions below 1 in the config, pointing at it", async () => {
    const error = await createContextManager({ cwd: project({ autoCompact: { maxAutoCompactions: 0 } }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).path).toBe("/autoCompact/maxAutoCompactions");
  });

  it("lets the contextWindow option override the config", async () => {
    const manager = await create({ cwd: project({}), contextWindow: 2000 });
    expect(manager.usage().contextWindow).toBe(2000);
  });
});

describe("createContextManager options", () => {
  it("starts from the messages given", async () => {
    const messages = exchange(100);
    const manager = await create({ compactor: piCompactor(), messages });
    expect(manager.messages).toEqual(messages);
    expect(manager.session).toBeNull();
  });

  it("refuses session and messages together", async () => {
    const error = await rejection(createContextManager({ compactor: piCompactor(), session: "/tmp/x.jsonl", messages: [user("hi")] }));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
    expect(error.message).toMatch(/both session and messages/);
  });

  it.each([0, 1.5, -1])("refuses maxAutoCompactions %s", async (max) => {
    const error = await rejection(createContextManager({ compactor: piCompactor(), maxAutoCompactions: max }));
    expect(error.message).toMatch(/maxAutoCompactions must be a whole number of at least 1/);
  });

  it("refuses an adapter that differs from the given compactor's", async () => {
    const error = await rejection(createContextManager({ compactor: piCompactor(), adapter: "openai" }));
    expect(error.message).toMatch(/the adapter option is 'openai', but the compactor given reads 'pi' messages/);
  });

  it("leaves a given compactor usable after dispose", async () => {
    const compactor = piCompactor();
    const manager = await createContextManager<PiMessage>({ compactor });
    await manager.dispose();
    expect(compactor.tokens.count(user("still counts"))).toBeGreaterThan(0);
  });

  it("disposes the compactor it built", async () => {
    const manager = await createContextManager<PiMessage>({ cwd: project({}) });
    await manager.dispose();
    expect(() => manager.compactor.tokens.counter.count("after dispose")).toThrow(/after dispose/);
  });

  it("refuses to append after dispose", async () => {
    const manager = await createContextManager<PiMessage>({ compactor: piCompactor() });
    await manager.dispose();
    expect(() => manager.append(user("late"))).toThrow(/the context manager was disposed/);
  });
});
