/**
 * The few types of pi's extension API (`@earendil-works/pi-coding-agent`, and
 * `@mariozechner/pi-coding-agent` 0.73) this extension uses, declared here with only the members it
 * reads, so the package builds and typechecks without pi installed (pi is an optional peer, and
 * the repository installs it only for the tests: `node scripts/host-install.mjs pi-0.87`).
 * pi-types.test.ts checks each against pi's own types whenever pi is installed: pi's values must
 * be assignable to these, and the extension factory to pi's.
 */

/** The session manager pi hands an extension (read-only); only what the extension reads. */
export interface ReadonlySessionManager {
  /** The session's JSONL file, or undefined for an in-memory session. */
  getSessionFile(): string | undefined;
  /** The id of the branch's last entry, or null in an empty session. */
  getLeafId(): string | null;
  /** The entries from the root to the branch's last entry (pi's `SessionEntry`s); @compaction/transcript reads them. */
  getBranch(): readonly unknown[];
}

/** The model pi runs (pi-ai's `Model`); only what the extension reads. */
export interface PiModel {
  readonly id: string;
  readonly provider: string;
  readonly contextWindow: number;
}

/** What a handler gets besides its event (pi's `ExtensionContext`); only what the extension reads. */
export interface ExtensionContext {
  readonly ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
  readonly hasUI: boolean;
  readonly cwd: string;
  readonly sessionManager: ReadonlySessionManager;
  readonly model: PiModel | undefined;
  /** Whether project-local trust is active (pi 0.79 and later). */
  isProjectTrusted?(): boolean;
  getSystemPrompt(): string;
}

/** pi's `session_before_compact` event; only what the extension reads. */
export interface SessionBeforeCompactEvent {
  readonly preparation: { readonly tokensBefore: number; readonly settings: { readonly reserveTokens: number } };
  /** The branch's session entries (pi's `SessionEntry`); @compaction/transcript reads them. */
  readonly branchEntries: readonly unknown[];
  readonly customInstructions?: string;
  readonly reason?: "manual" | "threshold" | "overflow";
  readonly signal: AbortSignal;
}

/** pi's `context` event: the messages about to be sent (pi's `AgentMessage`s). */
export interface ContextEvent {
  readonly messages: unknown[];
}

/** The compaction an extension returns from `session_before_compact` (pi's `CompactionResult`). */
export interface CompactionResult<T = unknown> {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
}

/** A tool registered with `registerTool` (pi's `ToolDefinition`); the extension passes the recall plugin's through. */
export interface ToolDefinition {
  readonly name: string;
}

/** The events the extension handles and what each handler gets. */
export interface PiExtensionEvents {
  session_start: unknown;
  before_agent_start: unknown;
  session_before_compact: SessionBeforeCompactEvent;
  /** After a compaction was written (ours or pi's own). */
  session_compact: unknown;
  context: ContextEvent;
  /** After each turn of the agent (its reply and tool results are in the session by then), and after the agent's run. */
  turn_end: unknown;
  agent_end: unknown;
  session_shutdown: unknown;
}

/** pi's event bus between extensions (`pi.events`). */
export interface PiEventBus {
  emit(channel: string, data: unknown): void;
  on(channel: string, handler: (data: unknown) => void): () => void;
}

/** The API pi hands an extension factory (pi's `ExtensionAPI`); only what the extension uses. */
export interface ExtensionAPI {
  on<E extends keyof PiExtensionEvents>(event: E, handler: (event: PiExtensionEvents[E], ctx: ExtensionContext) => unknown): unknown;
  registerTool(tool: ToolDefinition): void;
  getActiveTools(): string[];
  readonly events: PiEventBus;
}

/** An extension: pi calls it once with its API (pi's `ExtensionFactory`). */
export type ExtensionFactory = (pi: ExtensionAPI) => void | Promise<void>;
