/**
 * `compaction context inspect`: where the current context's tokens go (by message kind), how many
 * a compaction would keep or compact, and what it would save: a dry run, nothing is written.
 */
import { compactionAnchor, type TranscriptFormat } from "@compaction/transcript";
import type { CommandContext } from "../command-context.js";
import { type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { configOf, configSummary, type ConfigSummary } from "../load-compactor.js";
import { formatTokens, plural, sessionLabel } from "../output.js";

/** Tokens and message count of one category. */
export interface TokenShare {
  readonly tokens: number;
  readonly messages: number;
}

const CATEGORIES = ["conversation", "toolOutputs", "systemPrompt", "summaries", "other"] as const;
type Category = (typeof CATEGORIES)[number];

const LABELS: Readonly<Record<Category, string>> = {
  conversation: "Conversation",
  toolOutputs: "Tool outputs",
  systemPrompt: "System prompt",
  summaries: "Summaries",
  other: "Other",
};

/** Everything `context inspect` reports; `--json` prints it as is. */
export interface ContextInspection {
  readonly session: { readonly path: string; readonly id: string | null; readonly format: TranscriptFormat };
  /** Which configuration applied: the file, the agent's section, what the project may not run. */
  readonly config: ConfigSummary;
  readonly preset: string;
  readonly messages: number;
  /** Our count of every message (the categories sum to it). */
  readonly tokens: number;
  readonly breakdown: Readonly<Record<Category, TokenShare>>;
  /** From the dry run: tokens it would keep (pinned and recent) and compact; null when it would not compact. */
  readonly protectedTokens: number | null;
  readonly compactableTokens: number | null;
  readonly potentialSavings: {
    readonly tokens: number;
    readonly tokensBefore: number;
    readonly tokensAfter: number;
    readonly strategy: string | null;
    readonly layer: string | null;
    /** Why the dry run would not compact, or null. */
    readonly reason: string | null;
  };
}

/** `compaction context inspect`. */
export const contextInspectCommand = defineCommand({
  name: "inspect",
  description: "break the context's tokens down by kind and show what a compaction would keep and save (writes nothing)",
  session: true,
  agent: true,
  run: inspectContext,
  text: (inspection, { context }) => renderInspection(inspection, context),
});

/** Counts the context's tokens by kind and dry-runs a compaction. */
async function inspectContext(scope: CommandScope<CommonOptions, undefined>): Promise<ContextInspection> {
  const { options } = scope;
  const path = scope.session.shown;
  const loaded = scope.session.transcript();
  const compactor = await scope.compactor({ adapter: loaded.adapter });
  const shares = new Map<Category, { tokens: number; messages: number }>(CATEGORIES.map((name) => [name, { tokens: 0, messages: 0 }]));
  for (const message of loaded.messages) {
    const share = shares.get(categoryOf(compactor.facts.of(message).kind)) as { tokens: number; messages: number };
    share.tokens += compactor.tokens.count(message);
    share.messages += 1;
  }
  // The dry run decides in the measure `compact` and `context status` use (anchored on the last
  // compaction's After when no usage figure is newer).
  const anchor = loaded.pi === null ? undefined : compactionAnchor(loaded.pi);
  const dryRun = await compactor.compact({
    messages: loaded.messages,
    trigger: "manual",
    ...(anchor === undefined ? {} : { anchor }),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
  });
  const cut = dryRun.status === "compacted" ? dryRun.cut : null;
  // Like for like: our count of the context now against our count after the dry run
  // (tokensBefore may rest on the provider's usage, which also covers the system prompt).
  const counted = compactor.tokens.total(loaded.messages);
  const countedAfter = compactor.tokens.total(dryRun.messages);
  return {
    session: { path, id: loaded.sessionId, format: loaded.format },
    config: configSummary(configOf(compactor)),
    preset: configOf(compactor).preset,
    messages: loaded.messages.length,
    tokens: counted,
    breakdown: Object.fromEntries(shares) as Record<Category, TokenShare>,
    protectedTokens: cut?.keptTokens ?? null,
    compactableTokens: cut?.compactedTokens ?? null,
    potentialSavings: {
      tokens: cut === null ? 0 : Math.max(0, counted - countedAfter),
      tokensBefore: counted,
      tokensAfter: countedAfter,
      strategy: dryRun.event?.strategy ?? cut?.selectedBy ?? null,
      layer: dryRun.event?.layer ?? null,
      reason: cut === null ? (dryRun.reason ?? dryRun.status) : null,
    },
  };
}

function categoryOf(kind: string): Category {
  if (kind === "user" || kind === "assistant") return "conversation";
  if (kind === "toolResult") return "toolOutputs";
  if (kind === "system") return "systemPrompt";
  if (kind === "summary") return "summaries";
  return "other";
}

function renderInspection(inspection: ContextInspection, { out: c }: CommandContext): string {
  const percent = (tokens: number): string => (inspection.tokens > 0 ? `${Math.round((tokens / inspection.tokens) * 100)}%` : "0%");
  const row = (label: string, share: TokenShare): string =>
    `  ${label.padEnd(14)}${formatTokens(share.tokens).padStart(10)} tokens ${percent(share.tokens).padStart(4)}  (${plural(share.messages, "message")})`;
  const lines = [
    `${c.bold("Session")}  ${sessionLabel(inspection.session)} ${c.dim(`(${inspection.session.path})`)}`,
    `${c.bold("Context")}  ${formatTokens(inspection.tokens)} tokens counted in ${plural(inspection.messages, "message")}`,
    ...CATEGORIES.map((name) => row(LABELS[name], inspection.breakdown[name])),
    "",
  ];
  const savings = inspection.potentialSavings;
  if (inspection.protectedTokens === null || inspection.compactableTokens === null) {
    lines.push(`${c.bold("Compaction")} would not compact now (preset ${inspection.preset}): ${savings.reason ?? "no reason given"}`);
  } else {
    const by = `${savings.strategy ?? inspection.preset}${savings.layer === null ? "" : ` (layer ${savings.layer})`}`;
    lines.push(
      `${c.bold("Protected")}    ${formatTokens(inspection.protectedTokens)} tokens (pinned and recent, kept by ${by})`,
      `${c.bold("Compactable")}  ${formatTokens(inspection.compactableTokens)} tokens`,
      `${c.bold("Savings")}      ${c.green(formatTokens(savings.tokens))} tokens (${formatTokens(savings.tokensBefore)} -> ${formatTokens(savings.tokensAfter)}) by ${by}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
