/**
 * A message's fingerprint: the same content gives the same key, whether the AI SDK hands us the
 * same object again (ai 7 carries returned messages forward) or a rebuilt copy of it (ai 6 rebuilds
 * the history from the initial and response messages at every step). Computed once per object.
 */
import { createHash } from "node:crypto";
import type { ModelMessage } from "ai";

const keys = new WeakMap<object, string>();

/** Binary parts and URLs as stable JSON; everything else as JSON already writes it. */
function stableValue(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: createHash("sha256").update(value).digest("base64") };
  if (value instanceof ArrayBuffer) return { $bytes: createHash("sha256").update(new Uint8Array(value)).digest("base64") };
  if (value instanceof URL) return { $url: value.href };
  return value;
}

export function messageKey(message: ModelMessage): string {
  const known = keys.get(message);
  if (known !== undefined) return known;
  const key = createHash("sha256")
    .update(JSON.stringify(message, stableValue) ?? "")
    .digest("base64url");
  keys.set(message, key);
  return key;
}

/** Whether `keys` starts with every key of `prefix`. */
export function startsWith(keys: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > keys.length) return false;
  for (let i = 0; i < prefix.length; i++) if (keys[i] !== prefix[i]) return false;
  return true;
}
