/**
 * A copy of plain data: plain objects and arrays are copied all the way down, anything else
 * (functions, class instances, primitives) is kept as it is. Keys such as `__proto__` stay
 * ordinary own keys.
 */
export function cloneData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneData) as T;
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, cloneData(child)])) as T;
  }
  return value;
}

/** Freezes plain data all the way down and returns it. */
export function deepFreeze<T>(value: T): T {
  if ((Array.isArray(value) || isPlainObject(value)) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}

/** True for `{}`-style objects (prototype Object.prototype or null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
