/** What a command reads and writes, so tests and hosts can run `main` without a real terminal. */
export interface CliStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface CliIo {
  readonly stdout: CliStream;
  readonly stderr: CliStream;
  /** Where confirmations are read from. */
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** The process's own streams, environment and working directory. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/** Whether the switch `name` is on in `env`: set to anything but "" or "0" (COMPACTION_NO_PROJECT_CODE, COMPACTION_NO_COUNT_CACHE). */
export function envSwitchOn(env: CliIo["env"], name: string): boolean {
  const value = env[name];
  return value !== undefined && value !== "" && value !== "0";
}
