import { describe, expect, it } from "vitest";
import { checkCut } from "../cut/check-cut.js";
import type { MessageView } from "../cut/message-view.js";
import { fact } from "../testing/facts.js";
import { CARRIED_REQUEST_HEADING, carriedRequest, carryRequest } from "./carry-request.js";

const view: MessageView = {
  facts: [fact("user", { text: "old" }), fact("assistant"), fact("user", { text: "do the thing" }), fact("assistant"), fact("assistant"), fact("assistant")],
  tokens: [10, 10, 10, 10, 10, 10],
};
const cutAt = (firstKeptIndex: number, requestAhead: boolean) => checkCut(view, { firstKeptIndex }, { plugin: "p", budget: Number.POSITIVE_INFINITY, requestAhead });

describe("carryRequest", () => {
  it("adds the newest user message's text to a summary or note whose cut compacts it", () => {
    for (const kind of ["summary", "note"] as const) {
      const carried = carryRequest(view, cutAt(4, false), { kind, text: "## Goal\n- things\n" }, undefined);
      expect(carried).toEqual({ kind, text: `## Goal\n- things\n\n---\n\n${CARRIED_REQUEST_HEADING}\n\ndo the thing` });
    }
  });

  it("leaves the draft as it is when it holds the text already, the cut keeps the request, or the draft drops the messages", () => {
    const holds = { kind: "summary" as const, text: "## Original Request\ndo the thing" };
    expect(carryRequest(view, cutAt(4, false), holds, undefined)).toBe(holds);
    const summary = { kind: "summary" as const, text: "## Goal\n- things" };
    expect(carryRequest(view, cutAt(4, true), summary, undefined)).toBe(summary); // preserved ahead of the summary
    expect(carryRequest(view, cutAt(2, false), summary, undefined)).toBe(summary); // kept after it
    const none = { kind: "none" as const, text: "" };
    expect(carryRequest(view, cutAt(4, false), none, undefined)).toBe(none);
  });

  it("carries the request the previous summary carried while the context holds no user message (the split turn goes on)", () => {
    const later: MessageView = { facts: [fact("summary"), fact("assistant"), fact("toolResult"), fact("assistant"), fact("assistant")], tokens: [10, 10, 10, 10, 10] };
    const cut = checkCut(later, { firstKeptIndex: 3 }, { plugin: "p", budget: Number.POSITIVE_INFINITY, requestAhead: false });
    const previous = `## Goal\n- old\n\n---\n\n${CARRIED_REQUEST_HEADING}\n\ndo the thing`;
    const carried = carryRequest(later, cut, { kind: "summary", text: "## Goal\n- newer" }, previous);
    expect(carried.text).toBe(`## Goal\n- newer\n\n---\n\n${CARRIED_REQUEST_HEADING}\n\ndo the thing`);
    expect(carriedRequest(carried.text)).toBe("do the thing");
    expect(carriedRequest("## Goal\n- no request")).toBeUndefined();
  });
});
