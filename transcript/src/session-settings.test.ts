import { describe, expect, it } from "vitest";
import { autoCompactEntry, AUTO_COMPACT_CUSTOM_TYPE, sessionAutoCompact } from "./session-settings.js";
import type { SessionEntry } from "./types.js";

let next = 0;
function entry(fields: Record<string, unknown>): SessionEntry {
  next += 1;
  return { id: `e${next}`, parentId: null, timestamp: "2025-01-01T00:00:00.000Z", ...fields } as unknown as SessionEntry;
}

describe("sessionAutoCompact", () => {
  it("is undefined for a branch that never set it", () => {
    expect(sessionAutoCompact([entry({ type: "message", message: { role: "user", content: "hi", timestamp: 1 } })])).toBeUndefined();
  });

  it("takes the latest setting on the branch", () => {
    const branch = [entry(autoCompactEntry(false)), entry({ type: "label", targetId: "x" }), entry(autoCompactEntry(true))];
    expect(sessionAutoCompact(branch)).toBe(true);
    expect(sessionAutoCompact(branch.slice(0, 2))).toBe(false);
  });

  it("ignores other extensions' custom entries and malformed data", () => {
    const branch = [
      entry(autoCompactEntry(false)),
      entry({ type: "custom", customType: "someone.else", data: { enabled: true } }),
      entry({ type: "custom", customType: AUTO_COMPACT_CUSTOM_TYPE, data: { enabled: "yes" } }),
    ];
    expect(sessionAutoCompact(branch)).toBe(false);
  });

  it("writes a pi custom entry with the setting as data", () => {
    expect(autoCompactEntry(true)).toEqual({ type: "custom", customType: "compaction.autoCompact", data: { enabled: true } });
  });
});
