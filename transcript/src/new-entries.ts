/** New entries for a session file: the fields a writer assigns (id, parent, time) and the checks on the rest. */
import { randomUUID } from "node:crypto";
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { SessionEntry } from "./types.js";

type AssignedField = "id" | "parentId" | "timestamp";

/**
 * An entry to append: any session entry, with `id`, `parentId` and `timestamp` optional. Missing
 * ones are assigned: a fresh 8-hex-digit id, the previous entry (or the leaf) as parent, now.
 */
export type NewEntry = SessionEntry extends infer E
  ? E extends SessionEntry
    ? { -readonly [K in keyof E as K extends AssignedField ? never : K]: E[K] } & { id?: string; parentId?: string | null; timestamp?: string }
    : never
  : never;

/** A fresh entry id: 8 hex digits (as pi makes them), not in `taken`. */
export function newEntryId(taken: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = randomUUID().slice(0, 8);
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/** Options of `assignEntryFields`. */
export interface AssignEntryFieldsOptions {
  /**
   * Draws the id of an entry that has none (default: `newEntryId(taken)`). A store that must ask
   * its database which ids are used draws them beforehand and hands them out here.
   */
  readonly newId?: () => string;
  /** Where the entries are written, named in errors (with "nothing was written"). */
  readonly location?: string;
}

/**
 * Gives each new entry its missing `id`, `parentId` (the previous new entry, the first one
 * `parentId`) and `timestamp`, in pi's key order, after checking that each is a session entry
 * whose own `id`, if any, is not in `taken`. New ids avoid `taken`, which grows with them. Every
 * store's append makes its entries whole with this; the parents they name are the store's to check.
 */
export function assignEntryFields(entries: readonly NewEntry[], parentId: string | null, taken: Set<string>, options: AssignEntryFieldsOptions = {}): SessionEntry[] {
  const newId = options.newId ?? (() => newEntryId(taken));
  const where = options.location === undefined ? "" : `; nothing was written to ${options.location}`;
  const now = new Date().toISOString();
  const assigned: SessionEntry[] = [];
  let parent = parentId;
  entries.forEach((entry, index) => {
    checkNewEntry(entry, index);
    const { type, id, parentId: ownParent, timestamp, ...rest } = entry as NewEntry & Record<string, unknown>;
    if (id !== undefined && taken.has(id)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} has id "${id}", which the session already uses${where}.`, {
        ...(options.location === undefined ? {} : { file: options.location }),
        hint: "Leave `id` out to have a fresh one assigned.",
      });
    }
    const entryId = id ?? newId();
    taken.add(entryId);
    const full = { type, id: entryId, parentId: ownParent === undefined ? parent : ownParent, timestamp: timestamp ?? now, ...rest };
    assigned.push(full as unknown as SessionEntry);
    parent = entryId;
  });
  return assigned;
}

function checkNewEntry(entry: unknown, index: number): void {
  const problem = newEntryProblem(entry);
  if (problem === undefined) return;
  throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} is not a session entry: ${problem}.`, {
    hint: 'Pass objects like { type: "message", message: { role: "user", content: "...", timestamp } }.',
  });
}

function newEntryProblem(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return `found ${Array.isArray(entry) ? "an array" : String(entry)}`;
  const fields = entry as Record<string, unknown>;
  if (typeof fields["type"] !== "string" || fields["type"] === "") return "it has no `type`";
  if (fields["type"] === "session") return 'its type is "session" (the header is written once, when the session is made)';
  if (fields["type"] !== "message") return undefined;
  const message = fields["message"] as Record<string, unknown> | null | undefined;
  if (typeof message !== "object" || message === null || typeof message["role"] !== "string") {
    return "it is a message entry without a `message` that has a `role`";
  }
  return undefined;
}
