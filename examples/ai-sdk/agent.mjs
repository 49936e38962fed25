// An AI SDK agent whose prompts stay inside the context window: a ToolLoopAgent reads 14 large
// files, one per step, and compactionPrepareStep compacts the history by the `safeguard` preset
// whenever the next prompt would pass the preset's threshold.
//
//   npm ci && npm run build && node examples/ai-sdk/agent.mjs
//
// The model is the AI SDK's own mock, scripted, so this runs with no key and no network. For a
// real one: `import { openai } from "@ai-sdk/openai"` and `const model = openai("gpt-4o-mini")`.
import { compactionPrepareStep } from "@compaction/ai-sdk";
import { jsonSchema, stepCountIs, tool, ToolLoopAgent } from "ai";
import { MockLanguageModelV3 } from "ai/test";

const CONTEXT_WINDOW = 32_000;
const FILES = 14;

/** What the scripted model does: read src/module-0.ts ... src/module-13.ts, then answer. */
function scriptedModel() {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt, tools }) => {
      // A provider reports the prompt's size as usage; the mock estimates it (4 characters a token).
      const inputTokens = Math.ceil(JSON.stringify({ prompt, tools }).length / 4);
      const usage = {
        inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 20, text: 20, reasoning: 0 },
      };
      const current = step++;
      if (current < FILES) {
        const input = JSON.stringify({ path: `src/module-${current}.ts` });
        return { content: [{ type: "tool-call", toolCallId: `call-${current}`, toolName: "read_file", input }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
      }
      const text = "src/module-3.ts and src/module-9.ts still call fetchLegacy().";
      return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
}

/** A large file: about 12,000 characters of distinct lines. */
function readFile(path) {
  const lines = [`// ${path}`];
  for (let line = 0; lines.join("\n").length < 12_000; line++) {
    lines.push(`export function handler${line}(input) { return transform${(line * 31) % 97}(input, "${path}:${line}"); }`);
  }
  return lines.join("\n");
}

const agent = new ToolLoopAgent({
  model: scriptedModel(),
  instructions: "You are a careful code auditor. Use read_file to read files.",
  tools: {
    read_file: tool({
      description: "Read a file of the repository.",
      inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
      execute: async ({ path }) => readFile(path),
    }),
  },
  stopWhen: stepCountIs(FILES + 1),
  prepareStep: compactionPrepareStep({
    preset: "safeguard",
    contextWindow: CONTEXT_WINDOW,
    on: (event) => {
      if (event.type === "compaction-end") {
        console.log(`step ${event.stepNumber}: ${event.result.status}, ${event.result.tokensBefore} -> ${event.tokens} tokens`);
      } else if (event.type === "warning") {
        console.warn(`step ${event.stepNumber}: ${event.message}`);
      }
    },
  }),
});

const result = await agent.generate({
  prompt: "Audit the repository for every call of the deprecated fetchLegacy() API and list the files that still use it.",
});
const largest = Math.max(...result.steps.map((step) => step.usage.inputTokens ?? 0));
console.log(result.text);
console.log(`${result.steps.length} steps, largest prompt ${largest} tokens, context window ${CONTEXT_WINDOW}`);
