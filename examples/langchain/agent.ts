/**
 * A LangChain.js v1 agent whose history is compacted before each model call by the `researcher`
 * section of ./.compactionrc.json (the safeguard preset, a 16k window).
 *
 * The model is @langchain/core's fake chat model so this runs offline: it asks for a large web
 * page twelve times, then answers. Replace it with any chat model (`"openai:gpt-5"`,
 * `new ChatAnthropic(...)`) and nothing else changes.
 *
 * Run: npm start --workspace=@compaction/example-langchain
 */
import { compactionMiddleware, type LangChainCompactionEvent } from "@compaction/langchain";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent, tool } from "langchain";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const fetchPage = tool(
  async ({ url }) => `<html><title>${url}</title>\n` + `<p>Paragraph about ${url}: lorem ipsum dolor sit amet.</p>\n`.repeat(100) + "</html>",
  { name: "fetch_page", description: "Fetch a web page.", schema: z.object({ url: z.string() }) },
);

const model = fakeModel();
for (let page = 1; page <= 12; page++) {
  const url = `https://example.com/report-${page}`;
  model.respond(new AIMessage({ content: `Reading ${url}.`, tool_calls: [{ id: `call_${page}`, name: "fetch_page", args: { url }, type: "tool_call" }] }));
}
model.respond(new AIMessage("The twelve reports agree: revenue grew in every month."));

const agent = createAgent({
  model,
  tools: [fetchPage],
  systemPrompt: "You are a research assistant. Read every report before you answer.",
  middleware: [
    compactionMiddleware({
      agent: "researcher",
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      on: (event: LangChainCompactionEvent) => {
        if (event.type === "compaction-end") {
          console.log(`compaction: ${event.result.status}, ${event.result.tokensBefore} -> ${event.tokens} tokens`);
        } else if (event.type === "warning") {
          console.warn(`warning: ${event.message}`);
        }
      },
    }),
  ],
});

// Each step runs three graph nodes (compaction, model, tools): leave room for twelve steps.
const result = await agent.invoke({ messages: [new HumanMessage("Summarise the twelve monthly reports.")] }, { recursionLimit: 50 });

console.log(`model calls: ${model.callCount}, messages in state: ${result.messages.length}`);
console.log(`answer: ${result.messages.at(-1)?.text}`);
