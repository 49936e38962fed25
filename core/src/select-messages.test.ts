import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { CompactionError, ErrorCodes } from "./errors.js";
import { selectMessages } from "./select-messages.js";

interface Message {
  readonly id: number;
  readonly tokens: number;
}

const messagesOf = (tokens: readonly number[]): Message[] => tokens.map((t, id) => ({ id, tokens: t }));
const estimate = (message: Message): number => message.tokens;
const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

describe("selectMessages table", () => {
  const cases: {
    name: string;
    tokens: number[];
    budget: number;
    selectedIds: number[];
    overflow: { droppedCount: number; droppedTokens: number } | null;
  }[] = [
    { name: "all fit -> overflow null", tokens: [10, 20, 30], budget: 100, selectedIds: [0, 1, 2], overflow: null },
    { name: "exact fit at the budget boundary keeps all", tokens: [10, 20, 30], budget: 60, selectedIds: [0, 1, 2], overflow: null },
    {
      name: "one token under the boundary drops the oldest",
      tokens: [10, 20, 30],
      budget: 59,
      selectedIds: [1, 2],
      overflow: { droppedCount: 1, droppedTokens: 10 },
    },
    {
      name: "large newest message -> empty selection with all dropped",
      tokens: [5, 5, 500],
      budget: 100,
      selectedIds: [],
      overflow: { droppedCount: 3, droppedTokens: 510 },
    },
    {
      name: "large middle message stops selection though older small ones would fit",
      tokens: [1, 1, 1, 500, 10],
      budget: 100,
      selectedIds: [4],
      overflow: { droppedCount: 4, droppedTokens: 503 },
    },
    { name: "empty input -> empty selection, overflow null", tokens: [], budget: 100, selectedIds: [], overflow: null },
    {
      name: "budget 0 selects nothing when messages cost tokens",
      tokens: [3, 4],
      budget: 0,
      selectedIds: [],
      overflow: { droppedCount: 2, droppedTokens: 7 },
    },
    { name: "budget 0 keeps zero-token messages", tokens: [2, 0, 0], budget: 0, selectedIds: [1, 2], overflow: { droppedCount: 1, droppedTokens: 2 } },
    { name: "infinite budget keeps everything", tokens: [1e9, 1e9], budget: Infinity, selectedIds: [0, 1], overflow: null },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const result = selectMessages(messagesOf(c.tokens), c.budget, estimate);
      expect(result.selected.map((m) => m.id)).toEqual(c.selectedIds);
      expect(result.overflow).toEqual(c.overflow);
    });
  }
});

describe("selectMessages input checks", () => {
  for (const budget of [-1, Number.NaN, -Infinity]) {
    it(`rejects budget ${budget} with INPUT_INVALID`, () => {
      expect(() => selectMessages(messagesOf([1]), budget, estimate)).toThrowError(
        expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }),
      );
    });
  }

  it("rejects an estimate that is negative, naming the message index", () => {
    const run = (): unknown => selectMessages(messagesOf([1, -5, 1]), 100, estimate);
    expect(run).toThrowError(CompactionError);
    expect(run).toThrowError(/message 1/);
  });

  it("rejects an estimate that is NaN with INPUT_INVALID", () => {
    expect(() => selectMessages(messagesOf([Number.NaN]), 100, estimate)).toThrowError(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }),
    );
  });

  it("returns a new array, not the caller's, when all fit", () => {
    const input = messagesOf([1, 2]);
    const result = selectMessages(input, 10, estimate);
    expect(result.selected).not.toBe(input);
    expect(result.selected).toEqual(input);
  });
});

describe("selectMessages properties", () => {
  const arbitraryInput = fc.record({
    tokens: fc.array(fc.nat({ max: 200 }), { maxLength: 60 }),
    budget: fc.nat({ max: 3000 }),
  });

  it("selection is a suffix of the input", () => {
    fc.assert(
      fc.property(arbitraryInput, ({ tokens, budget }) => {
        const input = messagesOf(tokens);
        const { selected } = selectMessages(input, budget, estimate);
        expect(selected).toEqual(input.slice(input.length - selected.length));
      }),
    );
  });

  it("selected estimates sum to at most the budget", () => {
    fc.assert(
      fc.property(arbitraryInput, ({ tokens, budget }) => {
        const { selected } = selectMessages(messagesOf(tokens), budget, estimate);
        expect(sum(selected.map(estimate))).toBeLessThanOrEqual(budget);
      }),
    );
  });

  it("adding the next older message would exceed the budget unless all were taken", () => {
    fc.assert(
      fc.property(arbitraryInput, ({ tokens, budget }) => {
        const input = messagesOf(tokens);
        const { selected } = selectMessages(input, budget, estimate);
        if (selected.length === input.length) return;
        const nextOlder = input[input.length - selected.length - 1] as Message;
        expect(sum(selected.map(estimate)) + nextOlder.tokens).toBeGreaterThan(budget);
      }),
    );
  });

  it("dropped count plus selected length equals input length", () => {
    fc.assert(
      fc.property(arbitraryInput, ({ tokens, budget }) => {
        const { selected, overflow } = selectMessages(messagesOf(tokens), budget, estimate);
        expect((overflow?.droppedCount ?? 0) + selected.length).toBe(tokens.length);
      }),
    );
  });

  it("dropped tokens equal the sum of the dropped estimates, and overflow is null only when nothing dropped", () => {
    fc.assert(
      fc.property(arbitraryInput, ({ tokens, budget }) => {
        const { selected, overflow } = selectMessages(messagesOf(tokens), budget, estimate);
        const dropped = tokens.slice(0, tokens.length - selected.length);
        if (dropped.length === 0) expect(overflow).toBeNull();
        else expect(overflow).toEqual({ droppedCount: dropped.length, droppedTokens: sum(dropped) });
      }),
    );
  });
});
