/**
 * @compaction/pi — a pi-coding-agent (and OpenClaw) extension: compaction by the agent's preset
 * from `.compactionrc`, written as pi's own compaction entry, and pruning of old tool outputs in
 * what is sent to the model. Load the package (or `dist/index.js`) as a pi extension; the default
 * export takes its options from the environment.
 */
import { compactionExtension } from "./extension.js";

export { compactionExtension } from "./extension.js";
export {
  AGENT_ENV,
  BACKGROUND_ENV,
  defaultReport,
  FALLBACK_ENV,
  type PiCompactionOptions,
  type PiFallback,
  type PiReport,
  PRESET_ENV,
  PRUNE_ENV,
  resolvePiCompactionOptions,
  type ResolvedPiCompactionOptions,
} from "./options.js";
export { type BranchCompactEvent, type BranchCompaction, compactBranch, type CompactBranchInput, inferTrigger } from "./compact-branch.js";
export { beforeCompact, type BeforeCompactDeps, type SessionBeforeCompactResult } from "./before-compact.js";
export { ContextPruner, layeredOptionsOf, type PrunedContext, type PruneContextInput } from "./context-pruner.js";
export { RecallLink, type RecallStatus } from "./recall-link.js";
export { PI_DEFAULT_RESERVE_TOKENS, type PreparedOutcome, prepareAfterTurn, takePrepared } from "./background-compaction.js";

/** The extension with options from the environment: what pi loads from this package. */
const extension = compactionExtension();
export default extension;
