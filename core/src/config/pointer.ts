/** One JSON-pointer segment, escaped as RFC 6901 says (`~` -> `~0`, `/` -> `~1`). */
export function escapePointerSegment(segment: string | number): string {
  return String(segment).replaceAll("~", "~0").replaceAll("/", "~1");
}

/** A JSON pointer built from unescaped segments: `pointer("agents", "a/b")` -> `/agents/a~1b`. */
export function pointer(...segments: ReadonlyArray<string | number>): string {
  return segments.map((segment) => `/${escapePointerSegment(segment)}`).join("");
}

/** A pointer as shown to people: the empty pointer (the whole file) reads "(top level)". */
export function showPointer(path: string): string {
  return path === "" ? "(top level)" : path;
}
