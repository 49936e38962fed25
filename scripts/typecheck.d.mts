/**
 * The files among `files` (absolute paths) that import one of `packages` (the name or a subpath of
 * it), directly or through relative imports of each other; in their order.
 */
export function filesImporting(files: string[], packages: string[], read?: (file: string) => string): string[];

/** What a package's typecheck leaves out for the missing hosts, and whether it must fail instead (under CI). */
export function typecheckPlan(
  packageDir: string,
  options?: { env?: NodeJS.ProcessEnv; installed?: (packageDir: string, name: string) => boolean },
): { fileNames: string[]; options: object; leftOut: string[]; fail?: string; warning?: string };
