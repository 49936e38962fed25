/**
 * Each message's JSON, the key the cache meters compare requests by: serialised once per object,
 * so an unchanged message sent request after request costs one `JSON.stringify`.
 */
export class MessageKeys<T> {
  readonly #keys = new WeakMap<object, string>();

  of(message: T): string {
    if (typeof message !== "object" || message === null) return JSON.stringify(message);
    let key = this.#keys.get(message);
    if (key === undefined) {
      key = JSON.stringify(message);
      this.#keys.set(message, key);
    }
    return key;
  }
}
