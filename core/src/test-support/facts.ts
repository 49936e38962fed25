/** Hand-built MessageFacts for format-independent tests of the cut rules. */
import type { MessageFacts, MessageKind } from "../messages/adapter.js";

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

export const calls = (...ids: string[]) => ({ toolCalls: ids.map((id) => ({ id, name: "bash", arguments: {} })) });
export const answers = (...ids: string[]) => ({ toolResultIds: ids });
