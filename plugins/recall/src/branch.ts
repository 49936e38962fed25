/** The entries on a branch: the leaf and its ancestors, read from the index's id -> parentId links. */

/**
 * Ids from `leafId` up to the root. A parent id that names no entry ends the branch there, as in
 * pi (its line was corrupt, or it is outside the file); a cycle ends it too.
 */
export function branchIds(leafId: string | null, parentOf: (id: string) => string | null | undefined): Set<string> {
  const ids = new Set<string>();
  let current = leafId;
  while (current !== null && !ids.has(current)) {
    const parent = parentOf(current);
    if (parent === undefined) break;
    ids.add(current);
    current = parent;
  }
  return ids;
}
