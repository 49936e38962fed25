import { CompactionError, ErrorCodes, type TokenCounter, createEstimateCounter, createTiktokenCounter } from "@compaction/core";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  LAST_TURN_HEADING,
  TRUNCATION_MARKER,
  formatLastTurnSection,
  removeLastTurnSection,
  renderSection,
} from "./format-last-turn.js";

const estimate = createEstimateCounter();
const tiktoken = createTiktokenCounter();
afterAll(() => tiktoken.dispose());

/** The quoted text after a label, lines unquoted again. */
function unquote(section: string, label: "User" | "Assistant"): string {
  const body = section.slice(section.indexOf("\n\n") + 2);
  const lines = body.split("\n").map((line) => (line === ">" ? "" : line.slice(2)));
  const text = lines.join("\n");
  const start = text.indexOf(`**${label}:** `);
  if (start < 0) return "";
  const rest = text.slice(start + `**${label}:** `.length);
  const end = label === "User" ? rest.indexOf("\n\n**Assistant:** ") : -1;
  return end < 0 ? rest : rest.slice(0, end);
}

describe("formatLastTurnSection rendering", () => {
  it("renders the heading and both texts in one blockquote, exactly", () => {
    expect(formatLastTurnSection({ user: "fix the login bug", assistant: "Fixed it in auth.ts." }, 2000)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** fix the login bug\n>\n> **Assistant:** Fixed it in auth.ts.",
    );
  });

  it("keeps every line of multi-line text inside the blockquote", () => {
    const section = formatLastTurnSection({ user: "one\ntwo\n\nfour", assistant: "```ts\nconst x = 1;\n```" }, 2000);
    expect(section).toBe(
      [
        "## Last Exchange (Verbatim)",
        "",
        "> **User:** one",
        "> two",
        ">",
        "> four",
        ">",
        "> **Assistant:** ```ts",
        "> const x = 1;",
        "> ```",
      ].join("\n"),
    );
  });

  it("keeps a heading inside the text quoted, so it cannot end the section", () => {
    const section = formatLastTurnSection({ user: "## Goal\nnot a heading", assistant: "" }, 2000);
    expect(section.split("\n").slice(1).every((line) => line === "" || line.startsWith(">"))).toBe(true);
    expect(removeLastTurnSection(`base\n\n${section}`)).toBe("base");
  });

  it("turns Windows line endings into lines of the blockquote", () => {
    expect(formatLastTurnSection({ user: "a\r\nb", assistant: "" }, 2000)).toBe("## Last Exchange (Verbatim)\n\n> **User:** a\n> b");
  });

  it("renders only the user when the assistant has not replied", () => {
    expect(formatLastTurnSection({ user: "are you there?", assistant: "" }, 2000)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** are you there?",
    );
  });

  it("gives an empty string for no turn", () => {
    expect(formatLastTurnSection(null, 2000)).toBe("");
    expect(formatLastTurnSection(undefined, 2000)).toBe("");
  });

  it("gives an empty string for an empty turn", () => {
    expect(formatLastTurnSection({ user: "", assistant: "" }, 2000)).toBe("");
  });

  it("renders the same text uncapped with renderSection", () => {
    const turn = { user: "u", assistant: "a" };
    expect(renderSection(turn.user, turn.assistant)).toBe(formatLastTurnSection(turn, 2000));
  });

  it("throws COMPACTION_INPUT_INVALID for a negative or NaN cap", () => {
    for (const cap of [-1, Number.NaN]) {
      let thrown: unknown;
      try {
        formatLastTurnSection({ user: "u", assistant: "a" }, cap);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(CompactionError);
      expect((thrown as CompactionError).code).toBe(ErrorCodes.INPUT_INVALID);
    }
  });
});

describe("formatLastTurnSection cap", () => {
  const longAssistant = Array.from({ length: 400 }, (_, i) => `step${i}`).join(" ");

  it("keeps a section that fits the cap whole, without a truncation marker", () => {
    const section = formatLastTurnSection({ user: "q", assistant: longAssistant }, 10_000);
    expect(section).toContain(longAssistant);
    expect(section).not.toContain(TRUNCATION_MARKER);
  });

  it("cuts the assistant text first and ends it with [...truncated]", () => {
    const section = formatLastTurnSection({ user: "keep this request whole", assistant: longAssistant }, 200);
    expect(estimate.count(section)).toBeLessThanOrEqual(200);
    expect(unquote(section, "User")).toBe("keep this request whole");
    const assistant = unquote(section, "Assistant");
    expect(assistant.endsWith(` ${TRUNCATION_MARKER}`)).toBe(true);
    expect(longAssistant.startsWith(assistant.slice(0, -TRUNCATION_MARKER.length - 1))).toBe(true);
  });

  it("fills the cap: one more character of assistant text would not fit", () => {
    const section = formatLastTurnSection({ user: "q", assistant: longAssistant }, 200);
    const kept = unquote(section, "Assistant").slice(0, -TRUNCATION_MARKER.length - 1);
    const longer = renderSection("q", `${longAssistant.slice(0, kept.length + 1 + 40)} ${TRUNCATION_MARKER}`);
    expect(estimate.count(longer)).toBeGreaterThan(200);
  });

  it("cuts the user text too when the assistant text alone cannot make room", () => {
    const longUser = Array.from({ length: 400 }, (_, i) => `ask${i}`).join(" ");
    const section = formatLastTurnSection({ user: longUser, assistant: longAssistant }, 150);
    expect(estimate.count(section)).toBeLessThanOrEqual(150);
    expect(unquote(section, "Assistant")).toBe(TRUNCATION_MARKER);
    const user = unquote(section, "User");
    expect(user.endsWith(` ${TRUNCATION_MARKER}`)).toBe(true);
    expect(longUser.startsWith(user.slice(0, -TRUNCATION_MARKER.length - 1))).toBe(true);
  });

  it("cuts at a space rather than inside a word", () => {
    const section = formatLastTurnSection({ user: "q", assistant: longAssistant }, 120);
    const kept = unquote(section, "Assistant").slice(0, -TRUNCATION_MARKER.length - 1);
    expect(kept.split(" ").every((word) => /^step\d+$/.test(word))).toBe(true);
  });

  it("never cuts an emoji in half", () => {
    const section = formatLastTurnSection({ user: "q", assistant: "😀".repeat(500) }, 100);
    expect(section).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(section).toContain(TRUNCATION_MARKER);
  });

  it("gives an empty string when the cap cannot hold the heading and the markers", () => {
    expect(formatLastTurnSection({ user: "q", assistant: longAssistant }, 5)).toBe("");
  });

  it("counts with the counter it is given", () => {
    const perChar: TokenCounter = { name: "chars", count: (text) => text.length, dispose: () => {} };
    const section = formatLastTurnSection({ user: "q", assistant: longAssistant }, 300, perChar);
    expect(section.length).toBeLessThanOrEqual(300);
    expect(section.length).toBeGreaterThan(250);
  });
});

describe("formatLastTurnSection properties", () => {
  const text = fc.string({ unit: "grapheme", maxLength: 3000 });
  const prose = fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { maxLength: 600 }).map((w) => w.join(" "));
  const anyText = fc.oneof(text, prose, fc.constant(""));

  it("never exceeds the cap (chars/4) for caps of 30 and more", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.integer({ min: 30, max: 3000 }), (user, assistant, cap) => {
        expect(estimate.count(formatLastTurnSection({ user, assistant }, cap))).toBeLessThanOrEqual(cap);
      }),
      { numRuns: 300 },
    );
  });

  it("never exceeds the cap (tiktoken o200k_base) for caps of 30 and more", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.integer({ min: 30, max: 3000 }), (user, assistant, cap) => {
        expect(tiktoken.count(formatLastTurnSection({ user, assistant }, cap, tiktoken))).toBeLessThanOrEqual(cap);
      }),
      { numRuns: 100 },
    );
  });

  it("shows a non-empty turn for caps of 30 and more (chars/4)", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.integer({ min: 30, max: 3000 }), (user, assistant, cap) => {
        fc.pre(user.trim() !== "" || assistant.trim() !== "");
        expect(formatLastTurnSection({ user, assistant }, cap).startsWith(LAST_TURN_HEADING)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps the user text verbatim, or a prefix of it ending with [...truncated]", () => {
    fc.assert(
      fc.property(prose, prose, fc.integer({ min: 30, max: 800 }), (user, assistant, cap) => {
        fc.pre(user !== "");
        const shown = unquote(formatLastTurnSection({ user, assistant }, cap), "User");
        if (shown === user) return;
        expect(shown.endsWith(TRUNCATION_MARKER)).toBe(true);
        expect(user.startsWith(shown.slice(0, -TRUNCATION_MARKER.length).trimEnd())).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe("removeLastTurnSection", () => {
  it("removes a section up to the next ## heading", () => {
    const text = `## Goal\nship\n\n${LAST_TURN_HEADING}\n\n> **User:** old\n\n## Next Steps\n- test`;
    expect(removeLastTurnSection(text)).toBe("## Goal\nship\n\n## Next Steps\n- test");
  });

  it("removes a section at the end", () => {
    expect(removeLastTurnSection(`## Goal\nship\n\n${LAST_TURN_HEADING}\n\n> **User:** old`)).toBe("## Goal\nship");
  });

  it("returns text without the section unchanged", () => {
    const text = "## Goal\nship\n\n### Done\n- a\n";
    expect(removeLastTurnSection(text)).toBe(text);
  });
});
