/** Globs to add to vitest's `exclude` for the hosts (scripts/hosts/<name>) that are missing; throws under CI. */
export function missingHostExcludes(packageDir: string, needs: Record<string, string[]>): string[];
