/**
 * Rolling's long memory through recall: when rolling evicts, the agent gets back only what it
 * searches for. At each cut point of a probe, of the long-memory identifiers the rolling request
 * lacks, the share `memory_search` (the recall plugin's index of the session file) returns in its
 * top 5 hits when queried with the words of the user request the agent is answering at the cut
 * (the newest user message before it): in the hits' snippets (what the agent reads first), and in
 * the whole entries the hits name (what it can read next with `entryId`).
 */
import { join } from "node:path";
import type { MessageFacts, PiMessage } from "@compaction/core";
import { openRecallIndex } from "@compaction/plugin-recall";
import { type ContinuityProbe, contextText } from "@compaction/replay";
import { createSession, type NewEntry } from "@compaction/transcript";

let written = 0;

export interface RecallMeasure {
  /** Long-memory identifiers the rolling requests at the cut points lacked, summed. */
  readonly lacking: number;
  readonly inSnippets: number;
  readonly inEntries: number;
}

/** The top-5 search's share of what the requests lacked (see the file's comment). */
export async function recallOfLongMemory(
  probe: ContinuityProbe<PiMessage>,
  messages: readonly PiMessage[],
  requests: ReadonlyMap<number, readonly PiMessage[]>,
  options: { readonly factsOf: (m: PiMessage) => MessageFacts; readonly dir: string; readonly limit?: number },
): Promise<RecallMeasure> {
  let lacking = 0;
  let inSnippets = 0;
  let inEntries = 0;
  for (const cut of probe.cuts) {
    const request = requests.get(cut.index);
    if (request === undefined) continue;
    const held = contextText(request.map(options.factsOf));
    const lost = cut.longMemory.filter((identifier) => !held.includes(identifier));
    if (lost.length === 0) continue;
    const history = messages.slice(0, cut.index);
    const ask = [...history].reverse().find((m) => m.role === "user");
    if (ask === undefined) continue;
    const sessionPath = join(options.dir, `session-${++written}-cut-${cut.index}.jsonl`);
    await createSession(sessionPath, { cwd: "/bench/project" }, history.map((message) => ({ type: "message", message }) as NewEntry));
    const index = await openRecallIndex(sessionPath);
    try {
      const hits = await index.search(options.factsOf(ask).text, { limit: options.limit ?? 5 });
      const snippets = hits.map((hit) => hit.snippet).join("\n");
      const entries: string[] = [];
      for (const hit of hits) entries.push((await index.get(hit.entryId))?.text ?? "");
      const entryText = entries.join("\n");
      lacking += lost.length;
      inSnippets += lost.filter((identifier) => snippets.includes(identifier)).length;
      inEntries += lost.filter((identifier) => entryText.includes(identifier)).length;
    } finally {
      await index.close();
    }
  }
  return { lacking, inSnippets, inEntries };
}
