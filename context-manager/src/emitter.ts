/**
 * A small typed event emitter. Listeners run in the order they were added; one that throws does
 * not stop the others or the emitter's caller: its error is handed to `onListenerError`.
 */
export class TypedEmitter<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(payload: never) => void>>();
  readonly #onListenerError: (error: unknown, event: keyof Events) => void;

  constructor(onListenerError: (error: unknown, event: keyof Events) => void) {
    this.#onListenerError = onListenerError;
  }

  /** Adds a listener; returns the function that removes it. */
  on<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    const stored = listener as (payload: never) => void;
    set.add(stored);
    return () => void set.delete(stored);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    const set = this.#listeners.get(event);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        (listener as (payload: Events[E]) => void)(payload);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
