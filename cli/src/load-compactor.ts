/** The Compactor from the project's config, checked to read pi session messages. */
import { createCompactor, type Compactor, type PiMessage, type ResolvedConfig } from "@compaction/core";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";

/**
 * A compactor for `cwd`'s config with `agent`'s section applied and `preset` (from --preset)
 * in place of the configured one; its adapter must be `pi`.
 */
export async function loadCompactor(
  cwd: string,
  agent: string | undefined,
  preset?: string | undefined,
): Promise<Compactor<PiMessage>> {
  const compactor = await createCompactor<PiMessage>({
    cwd,
    ...(agent === undefined ? {} : { agent }),
    ...(preset === undefined ? {} : { preset }),
  });
  const config = compactor.config as ResolvedConfig;
  if (config.adapter !== "pi") {
    compactor.dispose();
    throw new CliError(
      ExitCode.CONFIG,
      `The config${config.filepath === null ? "" : ` ${config.filepath}`} sets adapter '${config.adapter}'${config.agent === null ? "" : ` for agent '${config.agent}'`}, but session files hold pi messages.`,
      "Set adapter to \"pi\" (the default), or pass --agent for a section that uses it.",
    );
  }
  return compactor;
}

/** The config the compactor was built from. */
export function configOf(compactor: Compactor<PiMessage>): ResolvedConfig {
  return compactor.config as ResolvedConfig;
}
