/** Send-time pruning lives with the layered plugin, shared by the pi and OpenClaw integrations. */
export { ContextPruner, layeredOptionsOf, type PrunedContext, type PruneContextInput } from "@compaction/plugin-layered";
