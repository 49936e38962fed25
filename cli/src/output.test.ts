import { describe, expect, it } from "vitest";
import { colorEnabled, colors, formatAge, usageBar } from "./output.js";

const plain = colors(false);

describe("output", () => {
  it("draws the usage bar as in the issue: [████████░░] 78% context (6,240 / 8,000 tokens)", () => {
    expect(usageBar(6240, 8000, plain)).toBe("[████████░░] 78% context (6,240 / 8,000 tokens)");
  });

  it("fills every cell when the context is at or over the window", () => {
    expect(usageBar(9000, 8000, plain)).toBe("[██████████] 113% context (9,000 / 8,000 tokens)");
  });

  it("colours a terminal unless NO_COLOR or --no-color, and a pipe only with FORCE_COLOR", () => {
    const tty = { write: () => true, isTTY: true };
    const pipe = { write: () => true, isTTY: false };
    expect(colorEnabled(tty, {}, true)).toBe(true);
    expect(colorEnabled(tty, { NO_COLOR: "1" }, true)).toBe(false);
    expect(colorEnabled(tty, {}, false)).toBe(false);
    expect(colorEnabled(pipe, {}, true)).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: "1" }, true)).toBe(true);
    expect(colorEnabled(pipe, { FORCE_COLOR: "0" }, true)).toBe(false);
  });

  it("words the time since an event in its largest whole unit", () => {
    expect([5_000, 60_000, 7_200_000, 3 * 86_400_000].map(formatAge)).toEqual(["5 seconds ago", "1 minute ago", "2 hours ago", "3 days ago"]);
  });
});
