// An agent loop of your own, on the core alone: OpenAI Chat Completions messages, the `safeguard`
// preset, and the core's HostLoop deciding when to compact and what each request sends. The user
// asks for 14 large files in turn, the agent reads each with a tool call and answers, in a
// 32,000-token window that the conversation outgrows.
//
//   npm ci && npm run build && node examples/own-loop/agent.mjs
//
// The model is scripted and the summarizer is the extractive one every preset lists, so this runs
// with no key and no network. For a real model, replace `model(request)` by your provider's call
// (`openai.chat.completions.create({ model, messages: request.messages, tools })`).
import { createCompactor, formatCount, HostLoop } from "@compaction/core";

const CONTEXT_WINDOW = 32_000;
const FILES = 14;

// The preset's plugins with the extractive summarizer; no .compactionrc needed.
const compactor = await createCompactor({ adapter: "openai", preset: "safeguard", cwd: import.meta.dirname });
// One loop per conversation: it fixes the reply's reserve for the window (the smaller of 16,384 and
// an eighth of it: 4,000 here), knows the preset's threshold, waits after a compaction that could
// not bring the context under it, and shapes every request so it only grows at its end.
const loop = new HostLoop(compactor, { contextWindow: CONTEXT_WINDOW, host: "examples/own-loop" });

let messages = [{ role: "system", content: "You are a careful code auditor. Use read_file to read files." }];
let largest = 0;
let calls = 0;

for (let turn = 0; turn < FILES; turn++) {
  messages.push({ role: "user", content: `Read src/module-${turn}.ts and tell me whether it calls the deprecated fetchLegacy().` });
  // The agent's tool loop for this turn: call the model until it answers without a tool call.
  for (;;) {
    // 1. Before each request: the context's size (here our o200k count of every message; a host
    //    that stores the provider's usage on its messages gets that figure plus what came after it).
    const tokens = compactor.tokens.contextTokens(messages).tokens;
    if (loop.due(tokens, messages)) {
      const result = await compactor.compact({ messages, contextWindow: CONTEXT_WINDOW, reserveTokens: loop.reserveTokens, trigger: "auto" });
      if (result.status === "compacted") messages = [...result.messages];
      // Told the size after, the loop waits before trying again if the compaction freed too little.
      const after = compactor.tokens.contextTokens(messages).tokens;
      loop.settle(after, messages);
      console.log(`call ${calls + 1}: ${result.status}, ${formatCount(tokens)} -> ${formatCount(after)} tokens${result.reason ? ` (${result.reason})` : ""}`);
    }

    // 2. What is sent: the context shaped to the window less the reserve. `problem` is an error
    //    the host must pass on: the request leaves older messages out, or cannot fit at all.
    const { request, problem } = loop.request(messages, loop.budget(compactor.tokens.budgetRatio(messages)));
    if (problem !== null) console.warn(`${problem.code}: ${problem.message}`);
    largest = Math.max(largest, request.tokens);
    calls += 1;
    const reply = model(request.messages);
    messages.push(reply);
    if (reply.tool_calls === undefined) break;

    // 3. The agent's tools run as usual; their results join the context.
    for (const call of reply.tool_calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: readFile(JSON.parse(call.function.arguments).path) });
    }
  }
}

console.log(`last answer: ${messages.at(-1).content}`);
// What the compactions kept: the summary names the files of the turns it replaced.
const text = messages.map((m) => m.content ?? "").join("\n");
const named = Array.from({ length: FILES }, (_, i) => `src/module-${i}.ts`).filter((path) => text.includes(path));
console.log(`files the context still names: ${named.length} of ${FILES}`);
console.log(`${calls} model calls, largest request ${formatCount(largest)} tokens, context window ${formatCount(CONTEXT_WINDOW)}`);
compactor.dispose();

/** The scripted model: read the file the newest user message names, then say what it found. */
function model(request) {
  const last = request.at(-1);
  const path = /src\/module-\d+\.ts/.exec(request.findLast((m) => m.role === "user").content)[0];
  if (last.role === "user") {
    return { role: "assistant", content: null, tool_calls: [{ id: `call-${calls}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path }) } }] };
  }
  const uses = path === "src/module-3.ts" || path === "src/module-9.ts";
  return { role: "assistant", content: `${path} ${uses ? "still calls" : "does not call"} fetchLegacy().` };
}

/** A large file: about 12,000 characters of distinct lines. */
function readFile(path) {
  const lines = [`// ${path}`];
  for (let line = 0; lines.join("\n").length < 12_000; line++) {
    lines.push(`export function handler${line}(input) { return transform${(line * 31) % 97}(input, "${path}:${line}"); }`);
  }
  return lines.join("\n");
}
