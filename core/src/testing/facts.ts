/** Hand-built MessageFacts, for format-independent tests of cut rules and summarizers. */
import type { MessageFacts, MessageKind } from "../messages/adapter.js";

/** Facts of one message: the given kind, nothing else unless `extra` says. */
export function fact(kind: MessageKind, extra: Partial<MessageFacts> = {}): MessageFacts {
  return {
    kind,
    text: "",
    thinking: "",
    toolCalls: [],
    toolResultIds: [],
    isError: false,
    imageCount: 0,
    pinned: false,
    ...extra,
  };
}

/** `extra` for a message issuing these tool calls (tool `bash`, no arguments). */
export const calls = (...ids: string[]) => ({ toolCalls: ids.map((id) => ({ id, name: "bash", arguments: {} })) });
/** `extra` for a message answering these tool-call ids. */
export const answers = (...ids: string[]) => ({ toolResultIds: ids });
