/** Whether the environment is CI's (CI set to anything but "", "0" or "false"), where every host's tests must run. */
export function isCi(env?: NodeJS.ProcessEnv): boolean;

/** Whether a Node version (default: the running Node's) satisfies a range of the form engines fields use; no range is any Node. */
export function nodeSatisfies(range: string | undefined, version?: string): boolean;

/** A host of scripts/hosts that links packages into a package and is missing there. */
export interface MissingHost {
  host: string;
  /** The host's packages the package lacks in its node_modules. */
  missing: string[];
  /** What is missing and the command that installs it. */
  message: string;
}

/** The hosts (scripts/hosts/<name>) that link packages into `packageDir` and are missing there. */
export function missingHosts(
  packageDir: string,
  options?: { hosts?: string[]; installed?: (packageDir: string, name: string) => boolean },
): MissingHost[];

/** Globs to add to vitest's `exclude` for the hosts (scripts/hosts/<name>) that are missing; throws under CI. */
export function missingHostExcludes(
  packageDir: string,
  needs: Record<string, string[]>,
  options?: { env?: NodeJS.ProcessEnv; installed?: (packageDir: string, name: string) => boolean; warn?: (line: string) => void },
): string[];
