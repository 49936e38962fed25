/** Finds the last exchange (a user message and the assistant's reply to it) among messages. */
import { CompactionError, ErrorCodes, type MessageAdapter, type MessageFacts } from "@compaction/core";

/** The last exchange: the user's text and the text the assistant answered with. */
export interface LastTurn {
  /** The user message's text; each image is shown as `[image]`. */
  readonly user: string;
  /** Text blocks of the assistant messages after it, joined by blank lines; "" when none replied yet. */
  readonly assistant: string;
}

/** How an image is shown in the extracted text. */
export const IMAGE_PLACEHOLDER = "[image]";

/**
 * The last user message among `facts` and the assistant text after it, or `null` when there is
 * no user message with text or images (no messages, only tool results, only assistant messages).
 * Tool results (including Anthropic's tool_result user messages), summaries, notes, tool calls
 * and thinking are never part of the exchange.
 */
export function extractLastTurn(facts: readonly MessageFacts[]): LastTurn | null;
/** The same, reading each message's facts with `adapter`. */
export function extractLastTurn<T>(messages: readonly T[], adapter: MessageAdapter<T>): LastTurn | null;
export function extractLastTurn<T>(items: readonly (T | MessageFacts)[], adapter?: MessageAdapter<T>): LastTurn | null {
  const facts = adapter ? (items as readonly T[]).map((m) => adapter.readFacts(m)) : requireFacts(items);
  for (let i = facts.length - 1; i >= 0; i--) {
    const f = facts[i] as MessageFacts;
    if (f.kind !== "user") continue;
    const user = visibleText(f);
    if (user === "") continue;
    const replies: string[] = [];
    for (let j = i + 1; j < facts.length; j++) {
      const reply = facts[j] as MessageFacts;
      if (reply.kind !== "assistant") continue;
      const text = visibleText(reply);
      if (text !== "") replies.push(text);
    }
    return { user, assistant: replies.join("\n\n") };
  }
  return null;
}

/** A message's text with one `[image]` per image on a line after it. */
function visibleText(facts: MessageFacts): string {
  // Verbatim, minus blank lines around it (indentation of the first line is kept).
  const text = facts.text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
  if (facts.imageCount <= 0) return text;
  const images = Array.from({ length: facts.imageCount }, () => IMAGE_PLACEHOLDER).join(" ");
  return text === "" ? images : `${text}\n${images}`;
}

function requireFacts(items: readonly unknown[]): readonly MessageFacts[] {
  if (!Array.isArray(items)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `extractLastTurn() expected an array of messages, found ${typeof items}.`);
  }
  items.forEach((item, index) => {
    const ok = typeof item === "object" && item !== null && typeof (item as { kind?: unknown }).kind === "string" &&
      typeof (item as { text?: unknown }).text === "string";
    if (!ok) {
      throw new CompactionError(
        ErrorCodes.INPUT_INVALID,
        `extractLastTurn() expected MessageFacts ({ kind, text, ... }) at index ${index}, found a value without them.`,
        { hint: "Pass host messages together with their adapter: extractLastTurn(messages, createPiAdapter())." },
      );
    }
  });
  return items as readonly MessageFacts[];
}
