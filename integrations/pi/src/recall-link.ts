/**
 * When the preset has recall (the `rolling` preset does), the extension is the host that opens
 * the session's recall index and gives the agent the `memory_search` tool the eviction note
 * names (see @compaction/plugin-recall, `connectRecall`).
 */
import { existsSync } from "node:fs";
import type { Compactor, PiMessage } from "@compaction/core";
import { connectRecall, type RecallConnection, recallSettings } from "@compaction/plugin-recall";
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "./pi-types.js";

/** pi's read-only session manager, as extensions see it. */
type ReadonlySessionManager = ExtensionContext["sessionManager"];

/** Whether the recall tool reaches the agent, and if not, why. */
export type RecallStatus =
  | { readonly state: "none" }
  | { readonly state: "connected"; readonly toolName: string; readonly connection: RecallConnection }
  | { readonly state: "unavailable"; readonly toolName: string; readonly reason: string };

export class RecallLink {
  readonly #pi: Pick<ExtensionAPI, "registerTool" | "getActiveTools">;
  #file: string | undefined;
  #connecting: Promise<RecallConnection | undefined> | undefined;

  constructor(pi: Pick<ExtensionAPI, "registerTool" | "getActiveTools">) {
    this.#pi = pi;
  }

  /**
   * Connects the session's index and registers the tool, once per session file. `none` when the
   * compactor has no recall plugin; `unavailable` when it has one but the agent cannot get the
   * tool (no session file yet, or pi's tool allowlist leaves it out). Rejects when the index
   * cannot be opened.
   */
  async ensure(compactor: Compactor<PiMessage>, sessions: ReadonlySessionManager): Promise<RecallStatus> {
    const settings = recallSettings(compactor);
    if (settings === undefined) return { state: "none" };
    const toolName = settings.toolName;
    const file = sessions.getSessionFile();
    if (file === undefined || !existsSync(file)) {
      return { state: "unavailable", toolName, reason: "the session has no file on disk yet for recall to index (an in-memory session, or one with no reply yet)" };
    }
    if (this.#file !== file || this.#connecting === undefined) {
      await this.close();
      this.#file = file;
      this.#connecting = this.#connect(compactor, file, sessions);
    }
    const connection = await this.#connecting;
    if (connection === undefined) return { state: "none" };
    if (!this.#pi.getActiveTools().includes(toolName)) {
      return { state: "unavailable", toolName, reason: `pi's tool allowlist leaves out '${toolName}'` };
    }
    return { state: "connected", toolName, connection };
  }

  /** Stops updating the index and writes what it held back. */
  async close(): Promise<void> {
    const connecting = this.#connecting;
    this.#connecting = undefined;
    this.#file = undefined;
    if (connecting === undefined) return;
    const connection = await connecting.catch(() => undefined);
    if (connection === undefined) return;
    connection.detach();
    await connection.index.close();
  }

  #connect(compactor: Compactor<PiMessage>, file: string, sessions: ReadonlySessionManager): Promise<RecallConnection | undefined> {
    const connecting = connectRecall(compactor, file, { leafId: () => sessions.getLeafId() }).then((connection) => {
      // pi validates arguments against `parameters`; plain JSON Schema works as TypeBox's does.
      if (connection !== undefined) this.#pi.registerTool(connection.tool.definition.pi as unknown as ToolDefinition);
      return connection;
    });
    connecting.catch(() => {
      if (this.#connecting === connecting) {
        this.#connecting = undefined;
        this.#file = undefined;
      }
    });
    return connecting;
  }
}
