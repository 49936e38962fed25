/**
 * Model calls held until a replay's simulated clock says they are answered: each is due at its
 * arrival plus the model's latency. Shared by every `ModelGate` (the in-process `HeldSummarizer`
 * and the benchmark's local HTTP server), which differ only in how a call is answered.
 */
export class HeldCalls {
  readonly #held: { readonly due: number; readonly answer: () => void }[] = [];
  readonly #waiters: (() => void)[] = [];

  /** Holds a call due at `due`, answered by `answer`, and wakes whoever waits for an arrival. */
  hold(due: number, answer: () => void): void {
    this.#held.push({ due, answer });
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Calls waiting for their answer. */
  get pending(): number {
    return this.#held.length;
  }

  /** When the earliest held call is due, or null. */
  get nextDue(): number | null {
    return this.#held.length === 0 ? null : Math.min(...this.#held.map((h) => h.due));
  }

  /** Answers the earliest held call; returns its due time, or null when none is held. */
  releaseNext(): number | null {
    if (this.#held.length === 0) return null;
    let at = 0;
    for (let i = 1; i < this.#held.length; i++) if (this.#held[i]!.due < this.#held[at]!.due) at = i;
    const [held] = this.#held.splice(at, 1);
    held!.answer();
    return held!.due;
  }

  /** Answers every held call. */
  releaseAll(): void {
    for (const held of this.#held.splice(0)) held.answer();
  }

  /** Resolves at the next call's arrival. */
  arrival(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
