/** A small seeded PRNG (mulberry32): the same seed gives the same session on every machine. */

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  /** `length` lowercase hex digits. */
  hex(length: number): string;
  /** A made-up pronounceable word of 2–3 syllables ("vormex", "talquin"): no real text contains it by chance. */
  coined(): string;
}

const CONSONANTS = "bdfgklmnprstvz";
const VOWELS = "aeiou";
const CODAS = ["", "", "n", "r", "x", "l", "sk", "nd"];

/** A Random seeded with a 32-bit integer. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new Error("pick() needs at least one item");
    return items[int(0, items.length - 1)] as T;
  };
  return {
    next,
    int,
    pick,
    chance: (probability) => next() < probability,
    hex: (length) => Array.from({ length }, () => "0123456789abcdef".charAt(int(0, 15))).join(""),
    coined: () => {
      const syllables = int(2, 3);
      let word = "";
      for (let i = 0; i < syllables; i++) word += CONSONANTS.charAt(int(0, CONSONANTS.length - 1)) + VOWELS.charAt(int(0, VOWELS.length - 1));
      return word + pick(CODAS);
    },
  };
}
