/**
 * cosmiconfig, imported when a config file is first read. Its TypeScript loader requires
 * `typescript` (9.9 MB): imported statically, a bundler pulls it into every bundle of the core
 * (10.4 MB for a Node bundle, against 0.15 MB without). So it is imported by a name bundlers do
 * not follow; Node resolves it from this package's dependencies as for any import.
 */
const COSMICONFIG: string = "cosmiconfig";

export async function loadCosmiconfig(): Promise<typeof import("cosmiconfig")> {
  return (await import(COSMICONFIG)) as typeof import("cosmiconfig");
}
