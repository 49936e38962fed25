/**
 * Anthropic's own blocks, in the shapes the Messages API documents: the `compaction` block of
 * server-side compaction (`compact_20260112`), server tool use and results (web search, web fetch,
 * code execution), and MCP tool use and results (the MCP connector). A server compaction block is
 * a summary; server and MCP tool pairs are pairs, so a compaction never keeps one half.
 */
import { describe, expect, it } from "vitest";
import { Compactor } from "../compactor/compactor.js";
import { toolPairs } from "../cut/message-view.js";
import { keepRecent } from "../testing/keep-recent.js";
import { listingSummarizer } from "../testing/summarizer.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { type AnthropicMessage, createAnthropicAdapter } from "./anthropic-adapter.js";

const adapter = createAnthropicAdapter();

/** A web search, as the web search tool documents its response. */
const webSearch: AnthropicMessage = {
  role: "assistant",
  content: [
    { type: "text", text: "I'll search for when Claude Shannon was born." },
    { type: "server_tool_use", id: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", name: "web_search", input: { query: "claude shannon birth date" } },
    {
      type: "web_search_tool_result",
      tool_use_id: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
      content: [
        {
          type: "web_search_result",
          url: "https://en.wikipedia.org/wiki/Claude_Shannon",
          title: "Claude Shannon - Wikipedia",
          encrypted_content: "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y",
          page_age: "April 30, 2025",
        },
      ],
    },
    { type: "text", text: "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan" },
  ],
};

/** A search that failed, web fetch, and code execution (the documented result shapes). */
const serverTools: AnthropicMessage = {
  role: "assistant",
  content: [
    { type: "server_tool_use", id: "srvtoolu_a93jad", name: "web_search", input: { query: "x" } },
    { type: "web_search_tool_result", tool_use_id: "srvtoolu_a93jad", content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" } },
    { type: "server_tool_use", id: "srvtoolu_01234567890abcdef", name: "web_fetch", input: { url: "https://example.com/article" } },
    {
      type: "web_fetch_tool_result",
      tool_use_id: "srvtoolu_01234567890abcdef",
      content: {
        type: "web_fetch_result",
        url: "https://example.com/article",
        content: {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "Full text content of the article..." },
          title: "Article Title",
          citations: { enabled: true },
        },
        retrieved_at: "2025-08-25T10:30:00Z",
      },
    },
    { type: "server_tool_use", id: "srvtoolu_01B3C4D5E6F7G8H9I0J1K2L3", name: "bash_code_execution", input: { command: "ls -la | head -5" } },
    {
      type: "bash_code_execution_tool_result",
      tool_use_id: "srvtoolu_01B3C4D5E6F7G8H9I0J1K2L3",
      content: { type: "bash_code_execution_result", stdout: "total 24\ndrwxr-xr-x 2 user user 4096 Jan 1 12:00 .", stderr: "", return_code: 0, content: [] },
    },
    { type: "server_tool_use", id: "srvtoolu_01A2B3C4D5E6F7G8H9I0J1K2", name: "code_execution", input: { code: "print(sum(range(10)))" } },
    {
      type: "code_execution_tool_result",
      tool_use_id: "srvtoolu_01A2B3C4D5E6F7G8H9I0J1K2",
      content: { type: "code_execution_result", stdout: "45\n", stderr: "", return_code: 0 },
    },
  ],
};

/** The MCP connector's blocks. */
const mcp: AnthropicMessage = {
  role: "assistant",
  content: [
    { type: "mcp_tool_use", id: "mcptoolu_014Q35RayjACSWkSj4X2yov1", name: "echo", server_name: "example-mcp", input: { param1: "value1", param2: "value2" } },
    { type: "mcp_tool_result", tool_use_id: "mcptoolu_014Q35RayjACSWkSj4X2yov1", is_error: false, content: [{ type: "text", text: "Hello" }] },
  ],
};

/** The response in which server-side compaction ran: the summary leads, the answer follows. */
const serverCompaction: AnthropicMessage = {
  role: "assistant",
  content: [
    { type: "compaction", content: "Summary of the conversation: The user requested help building a web scraper..." },
    { type: "text", text: "Based on our conversation so far, here is the next step." },
  ],
};

describe("Anthropic server blocks: facts", () => {
  it("reads a web search as a call and its result in one assistant message, with the titles and URLs but not the encrypted content", () => {
    const facts = adapter.readFacts(webSearch);
    expect(facts.kind).toBe("assistant");
    expect(facts.toolCalls).toEqual([{ id: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", name: "web_search", arguments: { query: "claude shannon birth date" } }]);
    expect(facts.toolResultIds).toEqual(["srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"]);
    expect(facts.text).toBe(
      [
        "I'll search for when Claude Shannon was born.",
        "https://en.wikipedia.org/wiki/Claude_Shannon",
        "Claude Shannon - Wikipedia",
        "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan",
      ].join("\n"),
    );
    expect(facts.text).not.toContain("EqgfCioIARgB");
  });

  it("reads the output of web fetch, bash and code execution, and a search's error code", () => {
    const facts = adapter.readFacts(serverTools);
    expect(facts.toolCalls.map((call) => call.name)).toEqual(["web_search", "web_fetch", "bash_code_execution", "code_execution"]);
    expect(facts.toolResultIds).toEqual(facts.toolCalls.map((call) => call.id));
    for (const piece of ["max_uses_exceeded", "Full text content of the article...", "Article Title", "total 24", "45\n"]) expect(facts.text).toContain(piece);
    expect(facts.text).not.toContain("2025-08-25T10:30:00Z");
  });

  it("reads MCP tool use and its result as a pair", () => {
    const facts = adapter.readFacts(mcp);
    expect(facts.toolCalls).toEqual([{ id: "mcptoolu_014Q35RayjACSWkSj4X2yov1", name: "echo", arguments: { param1: "value1", param2: "value2" } }]);
    expect(facts.toolResultIds).toEqual(["mcptoolu_014Q35RayjACSWkSj4X2yov1"]);
    expect(facts.text).toBe("Hello");
  });

  it("reads a server compaction block as a summary, followed by what the response says after it", () => {
    const facts = adapter.readFacts(serverCompaction);
    expect(facts.kind).toBe("summary");
    expect(facts.text).toBe(
      "Summary of the conversation: The user requested help building a web scraper...\nBased on our conversation so far, here is the next step.",
    );
    const paused: AnthropicMessage = { role: "assistant", content: [{ type: "compaction", content: "only the summary" }] };
    expect(adapter.readFacts(paused)).toMatchObject({ kind: "summary", text: "only the summary" });
  });

  it("reads a failed server compaction (content null) as the assistant message it is", () => {
    const failed: AnthropicMessage = { role: "assistant", content: [{ type: "compaction", content: null }, { type: "text", text: "carrying on" }] };
    expect(adapter.readFacts(failed)).toMatchObject({ kind: "assistant", text: "carrying on" });
  });

  it("pairs a server tool call with its result in a later message (a paused turn continued)", () => {
    const paused: AnthropicMessage = {
      role: "assistant",
      content: [{ type: "server_tool_use", id: "srvtoolu_p", name: "web_search", input: { query: "q" } }],
    };
    const continued: AnthropicMessage = {
      role: "assistant",
      content: [{ type: "web_search_tool_result", tool_use_id: "srvtoolu_p", content: [] }, { type: "text", text: "found nothing" }],
    };
    const pairs = toolPairs([paused, continued].map((m) => adapter.readFacts(m)));
    expect(pairs.callsOf[1]).toEqual([0]);
    expect(pairs.resultsOf[0]).toEqual([1]);
  });

  it.each([webSearch, serverTools, mcp, serverCompaction].map((m, i) => [i, m] as const))(
    "mapText on message %i rewrites the text it reads and nothing else (ids, inputs, encrypted content kept)",
    (_i, message) => {
      const before = adapter.readFacts(message);
      const copy = structuredClone(message);
      const mapped = adapter.mapText(message, (text) => text.toUpperCase());
      const after = adapter.readFacts(mapped);
      expect(after.text).toBe(before.text.toUpperCase());
      expect({ ...after, text: "" }).toEqual({ ...before, text: "" });
      expect(message).toEqual(copy);
      expect(JSON.stringify(mapped)).toContain("EqgfCioIARgB".repeat(message === webSearch ? 1 : 0));
    },
  );
});

describe("Anthropic server blocks: compacting a history that holds them", () => {
  const filler = (n: number) => `step ${n}: ` + "the scraper fetched another page and parsed its table. ".repeat(30);
  function history(): AnthropicMessage[] {
    const messages: AnthropicMessage[] = [{ role: "user", content: "Build a web scraper for the pricing tables." }, serverCompaction];
    for (let step = 0; step < 12; step++) {
      messages.push({ role: "user", content: filler(step) });
      // Ids are unique per response, as the API makes them.
      const server = step % 3 === 0 ? webSearch : step % 3 === 1 ? mcp : serverTools;
      messages.push(JSON.parse(JSON.stringify(server).replace(/(srvtoolu|mcptoolu)_(\w+)/g, `$1_$2_${step}`)) as AnthropicMessage);
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${step}`, name: "Read", input: { path: `page-${step}.html` } }],
      });
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${step}`, content: filler(step) }] });
    }
    return messages;
  }

  it("never keeps a server or MCP result without its call, and carries the server compaction's summary forward", async () => {
    const compactor = new Compactor<AnthropicMessage>({ adapter, tokenCounter: createEstimateCounter(), summarizer: listingSummarizer, plugins: [keepRecent(1500)], contextWindow: 4000 });
    const messages = history();
    const result = await compactor.compact({ messages });
    expect(result.status, result.reason ?? "").toBe("compacted");
    const issued = new Set<string>();
    for (const message of result.messages) {
      const facts = adapter.readFacts(message);
      for (const call of facts.toolCalls) issued.add(call.id);
      for (const id of facts.toolResultIds) expect(issued.has(id), `result ${id} kept without its call`).toBe(true);
    }
    expect(result.summary).toContain("The user requested help building a web scraper");
    expect(result.messages.filter((m) => adapter.readFacts(m).kind === "summary")).toHaveLength(1);
    compactor.dispose();
  });
});
