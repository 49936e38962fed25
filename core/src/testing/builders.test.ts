import { describe, expect, it } from "vitest";
import { FactsCache } from "../messages/adapter.js";
import { builders, FORMATS } from "./builders.js";

describe.each(FORMATS)("%s builders", (format) => {
  const b = builders(format);
  const facts = new FactsCache(b.adapter);

  it("build messages the adapter reads as the intended kinds, with tool links", () => {
    const messages = [
      b.user("fix it"),
      b.assistant("running", [{ id: "c1" }, { id: "c2", name: "read", args: { path: "a.ts" } }]),
      ...b.toolResults([
        { id: "c1", text: "boom", isError: true },
        { id: "c2", text: "content" },
      ]),
      b.assistant("done"),
    ];
    const read = messages.map((m) => facts.of(m));
    expect(read[0]?.kind).toBe("user");
    expect(read[1]?.toolCalls.map((c) => c.id)).toEqual(["c1", "c2"]);
    expect(read.slice(2, -1).flatMap((f) => f.toolResultIds)).toEqual(["c1", "c2"]);
    expect(read.slice(2, -1).some((f) => f.isError)).toBe(true);
    expect(read.at(-1)?.kind).toBe("assistant");
  });

  it("mark pinned copies and images", () => {
    expect(facts.of(b.pin(b.user("keep"))).pinned).toBe(true);
    expect(facts.of(b.image("look")).imageCount).toBe(1);
  });
});
