/** Hand-built MessageFacts and views for format-independent tests. */
import type { MessageKind, MessageView } from "@compaction/core";
import { fact } from "@compaction/core/testing";

export { fact };

/** A view of `[kind, tokens]` pairs; `call:<id>` / `result:<id>` kinds add tool links. */
export function view(...entries: readonly (readonly [string, number])[]): MessageView {
  const facts = entries.map(([spec]) => {
    const [kind, id] = spec.split(":");
    if (kind === "call") return fact("assistant", { toolCalls: [{ id: id ?? "c", name: "bash", arguments: {} }] });
    if (kind === "result") return fact("toolResult", { toolResultIds: [id ?? "c"] });
    if (kind === "pinned") return fact("user", { pinned: true });
    return fact(kind as MessageKind);
  });
  return { facts, tokens: entries.map(([, tokens]) => tokens) };
}
