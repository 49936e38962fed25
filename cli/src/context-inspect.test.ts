import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

interface Inspection {
  tokens: number;
  messages: number;
  breakdown: Record<string, { tokens: number; messages: number }>;
  protectedTokens: number | null;
  compactableTokens: number | null;
  potentialSavings: { tokens: number; tokensBefore: number; tokensAfter: number; strategy: string | null; layer: string | null };
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const inspect = (): Inspection => JSON.parse(sandbox.run(["context", "inspect", "--json"]).stdout) as Inspection;

describe("compaction context inspect", () => {
  it("breaks the context into categories whose tokens and messages sum to the counted total", () => {
    const inspection = inspect();
    const shares = Object.values(inspection.breakdown);
    expect(Object.keys(inspection.breakdown)).toEqual(["conversation", "toolOutputs", "systemPrompt", "summaries", "other"]);
    expect(shares.reduce((sum, share) => sum + share.tokens, 0)).toBe(inspection.tokens);
    expect(shares.reduce((sum, share) => sum + share.messages, 0)).toBe(914);
    expect(inspection.breakdown["systemPrompt"]).toEqual({ tokens: 0, messages: 0 });
    expect(inspection.breakdown["toolOutputs"]?.tokens).toBeGreaterThan(0);
  });

  it("splits the counted total into protected and compactable tokens by a dry run of the preset", () => {
    const inspection = inspect();
    expect(inspection.protectedTokens).toBeGreaterThan(0);
    expect((inspection.protectedTokens ?? 0) + (inspection.compactableTokens ?? 0)).toBe(inspection.tokens);
    // Savings compare like with like: our count now against our count after the dry run.
    expect(inspection.potentialSavings).toMatchObject({ strategy: "safeguard", layer: "summarize", tokensBefore: inspection.tokens });
    expect(inspection.potentialSavings.tokens).toBe(inspection.potentialSavings.tokensBefore - inspection.potentialSavings.tokensAfter);
  });

  it("shows the key numbers in its text output and writes nothing", () => {
    const before = sandbox.bytes();
    const inspection = inspect();
    const run = sandbox.run(["context", "inspect"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    const n = (value: number | null): string => (value ?? Number.NaN).toLocaleString("en-US");
    expect(run.stdout).toContain(`${n(inspection.tokens)} tokens counted in 914 messages`);
    expect(run.stdout).toMatch(new RegExp(`Tool outputs\\s+${n(inspection.breakdown["toolOutputs"]?.tokens ?? null)} tokens`));
    expect(run.stdout).toMatch(new RegExp(`Protected\\s+${n(inspection.protectedTokens)} tokens`));
    expect(run.stdout).toMatch(new RegExp(`Savings\\s+${n(inspection.potentialSavings.tokens)} tokens .* by safeguard \\(layer summarize\\)`));
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("counts the summary of a compacted session under summaries", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    expect(inspect().breakdown["summaries"]?.messages).toBe(1);
  });
});
