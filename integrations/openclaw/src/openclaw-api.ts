/**
 * The part of OpenClaw's plugin API this plugin uses, as OpenClaw 2026.9 declares it
 * (`openclaw/plugin-sdk/plugin-entry`: `OpenClawPluginApi`, `ContextEngine`, `CompactionProvider`;
 * see its docs/concepts/context-engine.md). Written out here, structurally, so the package builds
 * without OpenClaw's 1.9 MB of declarations; the test in the real `openclaw` package checks that
 * OpenClaw loads, selects and calls what these types describe.
 */

/** A message of the agent's transcript: pi's AgentMessage (`user`, `assistant`, `toolResult`, `compactionSummary`, ...). */
export type AgentMessage = { readonly role: string; readonly timestamp?: number } & Record<string, unknown>;

export interface ContextEngineInfo {
  readonly id: string;
  readonly name: string;
  readonly version?: string;
  readonly ownsCompaction?: boolean;
  readonly acceptedHostParams?: readonly string[];
  readonly transcriptSemantics?: {
    readonly currentTurnFence?: "before-current-turn-entry-v1";
    readonly turnAdvancementIdempotency?: "atomic-idempotent-v1";
  };
}

export interface AssembleParams {
  readonly sessionId: string;
  readonly sessionKey?: string;
  readonly messages: readonly AgentMessage[];
  readonly tokenBudget?: number;
  readonly model?: string;
  readonly prompt?: string;
}

export interface AssembleResult {
  messages: AgentMessage[];
  estimatedTokens: number;
  systemPromptAddition?: string;
}

export interface CompactParams {
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly agentId?: string;
  readonly tokenBudget?: number;
  readonly force?: boolean;
  readonly currentTokenCount?: number;
  readonly compactionTarget?: "budget" | "threshold";
  readonly customInstructions?: string;
  readonly abortSignal?: AbortSignal;
}

export interface CompactResult {
  ok: boolean;
  compacted: boolean;
  reason?: string;
  result?: {
    summary?: string;
    tokensBefore: number;
    tokensAfter?: number;
    details?: unknown;
  };
}

export interface IngestParams {
  readonly sessionId: string;
  readonly sessionKey?: string;
  readonly message: AgentMessage;
  readonly isHeartbeat?: boolean;
}

export interface AfterTurnParams {
  readonly sessionId: string;
  readonly sessionKey?: string;
  readonly messages: readonly AgentMessage[];
  readonly prePromptMessageCount: number;
  readonly isHeartbeat?: boolean;
  readonly tokenBudget?: number;
}

export interface CommitTurnParams {
  readonly advancementKey: string;
  readonly messages: readonly AgentMessage[];
  readonly sessionId: string;
  readonly sessionKey?: string;
  readonly isHeartbeat?: boolean;
}

export interface ContextEngine {
  readonly info: ContextEngineInfo;
  ingest(params: IngestParams): Promise<{ ingested: boolean }>;
  assemble(params: AssembleParams): Promise<AssembleResult>;
  compact(params: CompactParams): Promise<CompactResult>;
  afterTurn?(params: AfterTurnParams): Promise<void>;
  commitTurn?(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }>;
  dispose?(): Promise<void>;
}

/** What OpenClaw passes a context engine factory. */
export interface ContextEngineFactoryContext {
  readonly config?: unknown;
  readonly agentDir?: string;
  readonly workspaceDir?: string;
}

export interface CompactionProvider {
  readonly id: string;
  readonly label: string;
  summarize(params: {
    readonly messages: readonly unknown[];
    readonly signal?: AbortSignal;
    readonly compressionRatio?: number;
    readonly customInstructions?: string;
    readonly previousSummary?: string;
  }): Promise<string>;
}

/** OpenClaw's plugin-state keyed store (`api.runtime.state.openKeyedStore`), the calls this plugin makes. */
export interface KeyedStore<T> {
  register(key: string, value: T): Promise<void>;
  /** True when the key was new and is now stored; false when it was already there (one transaction). */
  registerIfAbsent(key: string, value: T): Promise<boolean>;
  lookup(key: string): Promise<T | undefined>;
}

/** What a tool returns (pi-agent-core's AgentToolResult): text for the model, details for logs. A thrown error becomes an error result. */
export interface AgentToolResult {
  content: { type: "text"; text: string }[];
  details?: unknown;
}

/** A tool the agent can call (pi-agent-core's AgentTool, as OpenClaw's tool factories return it). */
export interface AgentTool {
  readonly name: string;
  readonly label?: string;
  /** "direct-only": always in the model's tool list, never deferred behind OpenClaw's Tool Search catalog. */
  readonly catalogMode?: "direct-only";
  readonly description: string;
  /** JSON Schema of the arguments (OpenClaw validates the model's arguments against it). */
  readonly parameters: unknown;
  execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<AgentToolResult>;
}

/** What OpenClaw passes a tool factory for each run (`OpenClawPluginToolContext`, the fields this plugin reads). */
export interface ToolFactoryContext {
  readonly config?: { readonly plugins?: { readonly slots?: { readonly contextEngine?: string } } } & Record<string, unknown>;
  readonly workspaceDir?: string;
  readonly agentDir?: string;
  readonly agentId?: string;
  readonly sessionKey?: string;
  readonly sessionId?: string;
}

/** `api.registerTool`'s first argument: a tool, or a factory called per run (null: no tool for this run). */
export type ToolFactory = (ctx: ToolFactoryContext) => AgentTool | AgentTool[] | null | undefined;

export interface PluginLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface OpenClawPluginApi {
  readonly id?: string;
  /** OpenClaw's whole config (openclaw.json), as the plugin was loaded with it. */
  readonly config?: { readonly agents?: { readonly defaults?: { readonly workspace?: string } } } & Record<string, unknown>;
  readonly pluginConfig?: Record<string, unknown>;
  readonly logger?: PluginLogger;
  readonly runtime?: {
    readonly state?: {
      openKeyedStore?<T>(options: { namespace: string; retention: "retained" } | { namespace: string; maxEntries: number }): PluginStateStore<T>;
    };
  };
  registerContextEngine(id: string, factory: (ctx: ContextEngineFactoryContext) => ContextEngine | Promise<ContextEngine>): void;
  registerCompactionProvider?(provider: CompactionProvider): void;
  /** Every name registered must be in the manifest's `contracts.tools`. */
  registerTool?(tool: AgentTool | ToolFactory, options?: { name?: string; names?: string[]; optional?: boolean }): void;
}

/** Whatever `openKeyedStore` returns (a store, or a promise of one on some hosts). */
export type PluginStateStore<T> = KeyedStore<T> | Promise<KeyedStore<T>>;
