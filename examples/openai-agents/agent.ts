/**
 * An OpenAI Agents SDK run (`@openai/agents`) whose model input is compacted before every model
 * call by the `support` section of ./.compactionrc.json (the safeguard preset, a 16k window), with
 * @compaction/core's Responses adapter, in the run's `callModelInputFilter`.
 *
 * The model is the SDK's own `ScriptedModel` so this runs offline: it looks up ten large support
 * tickets, then answers. Use `model: "gpt-5"` (and an OPENAI_API_KEY) and nothing else changes.
 *
 * Run: npm start --workspace=@compaction/example-openai-agents
 */
import { type AgentInputItem, Agent, type CallModelInputFilter, run, setTracingDisabled, tool } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { createCompactor, createResponsesAdapter, type CompactionResult, type ResponsesItem } from "@compaction/core";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

setTracingDisabled(true);

/**
 * A `callModelInputFilter` that compacts what each model call is sent: past the preset's
 * auto-compaction share of the window, the items go through the compactor (a summary item, then
 * the newest items with every function call and its output kept together). The run's own history
 * is left as it is; the same history always gives the same input (prompt caches stay warm).
 */
export async function compactionInputFilter(options: { agent: string; cwd: string; onCompaction?: (result: CompactionResult<ResponsesItem>) => void }) {
  const compactor = await createCompactor<ResponsesItem>({ agent: options.agent, cwd: options.cwd, adapter: createResponsesAdapter() });
  const window = compactor.contextWindow ?? 128_000;
  const filter: CallModelInputFilter = async ({ modelData }) => {
    const items = modelData.input as ResponsesItem[];
    const instructions = compactor.tokens.counter.count(modelData.instructions ?? "");
    if (compactor.tokens.total(items) + instructions <= compactor.autoCompactTokens(window)) return modelData;
    const result = await compactor.compact({ messages: items, contextWindow: window - instructions, trigger: "auto", agent: options.agent });
    options.onCompaction?.(result);
    return { ...modelData, input: result.messages as AgentInputItem[] };
  };
  return { filter, compactor };
}

const here = fileURLToPath(new URL(".", import.meta.url));

const lookupTicket = tool({
  name: "lookup_ticket",
  description: "Read a support ticket with its whole thread.",
  parameters: z.object({ id: z.number() }),
  execute: async ({ id }) => `Ticket #${id}\n` + `Customer reports that the export to CSV times out after 30 seconds (thread message ${id}).\n`.repeat(120),
});

export async function runExample() {
  const model = new ScriptedModel([
    ...Array.from({ length: 10 }, (_, i) => [functionCall("lookup_ticket", { id: i + 1 }, { callId: `call_${i + 1}` })]),
    [assistantMessage("All ten tickets are the CSV export timeout; raise the export timeout to 120 s.")],
  ]);
  const results: CompactionResult<ResponsesItem>[] = [];
  const { filter, compactor } = await compactionInputFilter({ agent: "support", cwd: here, onCompaction: (result) => results.push(result) });
  const agent = new Agent({ name: "support", instructions: "You triage support tickets. Read each one before answering.", model, tools: [lookupTicket] });
  try {
    const result = await run(agent, "Read tickets 1 to 10 and tell me what they have in common.", { callModelInputFilter: filter, maxTurns: 20 });
    return { model, finalOutput: result.finalOutput, compactions: results };
  } finally {
    compactor.dispose();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { model, finalOutput, compactions } = await runExample();
  for (const result of compactions) console.log(`compaction: ${result.status}, ${result.tokensBefore} -> ${result.tokensAfter} tokens`);
  console.log(`model calls: ${model.calls.length}`);
  console.log(`answer: ${finalOutput}`);
}
