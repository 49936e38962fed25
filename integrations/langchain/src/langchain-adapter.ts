/**
 * A MessageAdapter for LangChain.js messages (`BaseMessage` of `@langchain/core` 1.x): what a
 * `createAgent` graph keeps in `state.messages` and what chat models take.
 *
 * - `SystemMessage` is `system`; `HumanMessage` is `user`; `AIMessage` (and `AIMessageChunk`) is
 *   `assistant` with its `tool_calls`; `ToolMessage` is a `toolResult` answering `tool_call_id`
 *   (`status: "error"` is a failed call).
 * - Content is a string or an array of blocks: `text` blocks are text, `reasoning` and `thinking`
 *   blocks are thinking, `image` and `image_url` blocks are images. Provider blocks that repeat a
 *   tool call (Anthropic's `tool_use`) are not text: the call is read from `tool_calls`.
 * - A summary is a `HumanMessage` (every provider takes one mid-conversation; not every provider
 *   takes a late `SystemMessage`) marked `additional_kwargs.lc_source = "compaction_summary"`.
 *   LangChain's own `summarizationMiddleware` summaries (`lc_source: "summarization"`) read as
 *   summaries too, so the two can be mixed.
 * - Everything that comes out is a real `BaseMessage` of the same class as what went in.
 */
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import {
  type AdapterOptions,
  CompactionError,
  describeValue,
  ErrorCodes,
  mapArgumentStrings,
  mapTextContent,
  type MessageAdapter,
  type MessageFacts,
  type ToolCallInfo,
  unwrapSummary,
  withoutBlocks,
  wrapSummary,
} from "@compaction/core";

/** `additional_kwargs.lc_source` of the HumanMessage that carries a compaction summary. */
export const LANGCHAIN_SUMMARY_SOURCE = "compaction_summary";
/** `additional_kwargs.lc_source` of the HumanMessage that carries a compaction note. */
export const LANGCHAIN_NOTE_SOURCE = "compaction_note";
/** `additional_kwargs.lc_source` of the summaries LangChain's `summarizationMiddleware` writes. */
export const LANGCHAIN_OWN_SUMMARY_SOURCE = "summarization";

const ADAPTER_NAME = "langchain";

type Block = Readonly<Record<string, unknown>>;

function isBlock(value: unknown): value is Block {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function joinText(parts: readonly string[]): string {
  return parts.filter((part) => part.length > 0).join("\n");
}

interface ContentReading {
  text: string;
  thinking: string;
  imageCount: number;
}

function readContent(content: unknown): ContentReading {
  if (typeof content === "string") return { text: content, thinking: "", imageCount: 0 };
  if (!Array.isArray(content)) return { text: "", thinking: "", imageCount: 0 };
  const texts: string[] = [];
  const thoughts: string[] = [];
  let imageCount = 0;
  for (const block of content as unknown[]) {
    if (!isBlock(block)) continue;
    switch (block["type"]) {
      case "text":
        if (typeof block["text"] === "string") texts.push(block["text"]);
        break;
      case "reasoning":
        if (typeof block["reasoning"] === "string") thoughts.push(block["reasoning"]);
        break;
      case "thinking":
        if (typeof block["thinking"] === "string") thoughts.push(block["thinking"]);
        break;
      case "image":
      case "image_url":
        imageCount += 1;
        break;
    }
  }
  return { text: joinText(texts), thinking: joinText(thoughts), imageCount };
}

function readToolCalls(message: BaseMessage): ToolCallInfo[] {
  const calls = (message as AIMessage).tool_calls;
  if (!Array.isArray(calls)) return [];
  const out: ToolCallInfo[] = [];
  for (const call of calls) {
    if (!isBlock(call) || typeof call.id !== "string" || call.id === "") continue;
    out.push({ id: call.id, name: typeof call.name === "string" ? call.name : "", arguments: call.args });
  }
  return out;
}

function readUsage(message: BaseMessage): number | undefined {
  const usage = (message as AIMessage).usage_metadata;
  if (!isBlock(usage)) return undefined;
  const total = usage.total_tokens;
  if (typeof total === "number" && Number.isFinite(total) && total > 0) return total;
  const sum = (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
  return Number.isFinite(sum) && sum > 0 ? sum : undefined;
}

function sourceOf(message: BaseMessage): unknown {
  const kwargs = message.additional_kwargs as Record<string, unknown> | undefined;
  return isBlock(kwargs) ? kwargs["lc_source"] : undefined;
}

/** `BaseMessage.type` ("human", "ai", "system", "tool", "generic", "remove", ...). */
function typeOf(message: BaseMessage): string {
  const type = (message as { type?: unknown }).type;
  if (typeof type === "string") return type;
  return typeof message._getType === "function" ? message._getType() : "";
}

function requireMessage(message: unknown): BaseMessage {
  if (isBlock(message) && ("content" in message || typeof (message as { _getType?: unknown })._getType === "function")) {
    return message as unknown as BaseMessage;
  }
  throw new CompactionError(
    ErrorCodes.MESSAGE_UNREADABLE,
    `The langchain message adapter expected a BaseMessage (HumanMessage, AIMessage, ToolMessage, SystemMessage) but found ${describeValue(message)}.`,
    { hint: "Pass the agent's state.messages unchanged; convert plain objects with coerceMessageLikeToMessage from @langchain/core/messages first." },
  );
}

function readLangChainFacts(message: BaseMessage, pinned: boolean): MessageFacts {
  const { text, thinking, imageCount } = readContent(message.content);
  const base = { pinned, ...(message.id === undefined ? {} : { id: message.id }) };
  const none = { thinking: "", toolCalls: [], toolResultIds: [], isError: false, imageCount: 0 } as const;
  switch (typeOf(message)) {
    case "system":
    case "developer":
      return Object.freeze({ ...none, ...base, kind: "system", text });
    case "human": {
      const source = sourceOf(message);
      if (source === LANGCHAIN_SUMMARY_SOURCE || source === LANGCHAIN_OWN_SUMMARY_SOURCE) {
        return Object.freeze({ ...none, ...base, kind: "summary", text: unwrapSummary(text) });
      }
      return Object.freeze({ ...none, ...base, kind: source === LANGCHAIN_NOTE_SOURCE ? "other" : "user", text, imageCount });
    }
    case "ai": {
      const usage = readUsage(message);
      return Object.freeze({
        ...none,
        ...base,
        kind: "assistant",
        text,
        thinking,
        toolCalls: readToolCalls(message),
        imageCount,
        ...(usage === undefined ? {} : { usageContextTokens: usage }),
      });
    }
    case "tool": {
      const tool = message as ToolMessage;
      return Object.freeze({
        ...none,
        ...base,
        kind: "toolResult",
        text,
        imageCount,
        toolResultIds: typeof tool.tool_call_id === "string" ? [tool.tool_call_id] : [],
        isError: tool.status === "error",
        ...(typeof tool.name === "string" ? { toolName: tool.name } : {}),
      });
    }
    default:
      return Object.freeze({ ...none, ...base, kind: "other", text });
  }
}

/** The fields every message class takes, copied from `message`. */
function baseFields(message: BaseMessage): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    content: message.content,
    additional_kwargs: { ...message.additional_kwargs },
    response_metadata: { ...message.response_metadata },
  };
  if (message.id !== undefined) fields["id"] = message.id;
  if (message.name !== undefined) fields["name"] = message.name;
  return fields;
}

/**
 * A new message of the same class as `message` with `content` replaced; every other field (ids,
 * tool calls, usage, status, artifact, metadata) is kept. Unknown classes are returned as they are.
 */
export function withContent(message: BaseMessage, content: unknown): BaseMessage {
  return rebuilt(message, { content });
}

/** What `rebuilt` may replace: the content, and an AIMessage's tool calls and additional_kwargs. */
interface Changes {
  readonly content: unknown;
  readonly tool_calls?: AIMessage["tool_calls"];
  readonly additional_kwargs?: BaseMessage["additional_kwargs"];
}

/**
 * A new message of the same class as `message` with `changes` made, through its constructor (so
 * its serialised form, `lc_kwargs`, says the same); everything else kept as `withContent` keeps it.
 */
function rebuilt(message: BaseMessage, changes: Changes): BaseMessage {
  const fields: Record<string, unknown> = { ...baseFields(message), content: changes.content };
  if (changes.additional_kwargs !== undefined) fields["additional_kwargs"] = changes.additional_kwargs;
  switch (typeOf(message)) {
    case "human":
      return new HumanMessage(fields as ConstructorParameters<typeof HumanMessage>[0]);
    case "system":
      return new SystemMessage(fields as ConstructorParameters<typeof SystemMessage>[0]);
    case "ai": {
      const ai = message as AIMessage;
      const aiFields = {
        ...fields,
        tool_calls: changes.tool_calls ?? ai.tool_calls ?? [],
        invalid_tool_calls: ai.invalid_tool_calls ?? [],
        ...(ai.usage_metadata === undefined ? {} : { usage_metadata: ai.usage_metadata }),
      } as ConstructorParameters<typeof AIMessage>[0];
      return AIMessageChunk.isInstance(message) ? new AIMessageChunk(aiFields as ConstructorParameters<typeof AIMessageChunk>[0]) : new AIMessage(aiFields);
    }
    case "tool": {
      const tool = message as ToolMessage;
      const toolFields = { ...fields, tool_call_id: tool.tool_call_id } as Record<string, unknown>;
      if (tool.status !== undefined) toolFields["status"] = tool.status;
      if (tool.artifact !== undefined) toolFields["artifact"] = tool.artifact;
      if (tool.metadata !== undefined) toolFields["metadata"] = tool.metadata;
      return new ToolMessage(toolFields as unknown as ConstructorParameters<typeof ToolMessage>[0]);
    }
    case "generic":
      return new ChatMessage({ ...fields, role: (message as ChatMessage).role } as ConstructorParameters<typeof ChatMessage>[0]);
    default:
      return message;
  }
}

/** Content blocks read as thinking, and Anthropic's redacted thinking, which goes with them. */
const THINKING_BLOCKS = ["reasoning", "thinking", "redacted_thinking"];

/**
 * A copy of an AIMessage with every string inside its tool calls' arguments rewritten. The facts
 * read the calls from `tool_calls`, but a call is often stored twice more, and chat models send
 * whichever copy they read (ChatAnthropic the content's `tool_use` block, a v1 message its
 * `tool_call` block, an older integration `additional_kwargs.tool_calls`): the copies of the same
 * call (by id) are rewritten alike, so what is sent is what was counted.
 */
function withToolArguments(message: AIMessage, rewrite: (text: string) => string): BaseMessage {
  const ids = new Set(readToolCalls(message).map((call) => call.id));
  const tool_calls = (message.tool_calls ?? []).map((call) =>
    typeof call.id === "string" && ids.has(call.id) && call.args !== undefined ? { ...call, args: mapArgumentStrings(call.args, rewrite) as Record<string, unknown> } : call,
  );
  const content = Array.isArray(message.content)
    ? (message.content as unknown[]).map((block) => {
        if (!isBlock(block) || typeof block["id"] !== "string" || !ids.has(block["id"])) return block;
        if (block["type"] === "tool_call" && block["args"] !== undefined) return { ...block, args: mapArgumentStrings(block["args"], rewrite) };
        if (block["type"] === "tool_use" && block["input"] !== undefined) return { ...block, input: mapArgumentStrings(block["input"], rewrite) };
        return block;
      })
    : message.content;
  const raw = message.additional_kwargs?.tool_calls;
  const additional_kwargs = Array.isArray(raw)
    ? {
        ...message.additional_kwargs,
        tool_calls: raw.map((call) =>
          isBlock(call) && typeof call.id === "string" && ids.has(call.id) && isBlock(call.function) && typeof call.function.arguments === "string"
            ? { ...call, function: { ...call.function, arguments: mapArgumentStrings(call.function.arguments, rewrite) as string } }
            : call,
        ),
      }
    : undefined;
  return rebuilt(message, { content, tool_calls, ...(additional_kwargs === undefined ? {} : { additional_kwargs }) });
}

/** The default pin rule: `additional_kwargs.pinned === true`. */
function pinnedByKwargs(message: BaseMessage): boolean {
  const kwargs = message.additional_kwargs as Record<string, unknown> | undefined;
  return isBlock(kwargs) && kwargs["pinned"] === true;
}

/**
 * The adapter for LangChain.js `BaseMessage`s. Pinned messages are, by default, those with
 * `additional_kwargs.pinned === true` (pass `isPinned` to decide otherwise).
 */
export function createLangChainAdapter(options: AdapterOptions<BaseMessage> = {}): MessageAdapter<BaseMessage> {
  const isPinned = options.isPinned ?? pinnedByKwargs;
  return {
    name: ADAPTER_NAME,
    readFacts(message) {
      const checked = requireMessage(message);
      return readLangChainFacts(checked, isPinned(checked));
    },
    createSummary(text) {
      return new HumanMessage({ content: wrapSummary(text), additional_kwargs: { lc_source: LANGCHAIN_SUMMARY_SOURCE } });
    },
    createNote(text) {
      return new HumanMessage({ content: text, additional_kwargs: { lc_source: LANGCHAIN_NOTE_SOURCE } });
    },
    replaceToolOutput(message, replacement) {
      const checked = requireMessage(message);
      if (typeOf(checked) !== "tool") {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `The langchain message adapter can only replace the output of a ToolMessage, but found a message of type ${describeValue(typeOf(checked))}.`,
          { hint: 'Call replaceToolOutput only on messages whose facts have kind "toolResult".' },
        );
      }
      return withContent(checked, replacement);
    },
    mapText(message, rewrite) {
      const checked = requireMessage(message);
      if (typeof checked.content !== "string" && !Array.isArray(checked.content)) return checked;
      return withContent(checked, mapTextContent(checked.content, rewrite, "text"));
    },
    // Thinking lives in content blocks (Anthropic's thinking, v1 reasoning), which is where the
    // facts read it; additional_kwargs are passed to the provider as they are and never counted.
    dropThinking(message) {
      const checked = requireMessage(message);
      if (typeOf(checked) !== "ai") return checked;
      const content = withoutBlocks(checked.content, ...THINKING_BLOCKS);
      return content === checked.content ? checked : withContent(checked, content);
    },
    mapToolArguments(message, rewrite) {
      const checked = requireMessage(message);
      if (typeOf(checked) !== "ai" || readToolCalls(checked).length === 0) return checked;
      return withToolArguments(checked as AIMessage, rewrite);
    },
    // ChatAnthropic sends a content block's cache_control as it is (a cache breakpoint); thinking
    // blocks cannot carry one, so it goes on the last block that can.
    markCacheBreakpoint(message) {
      const checked = requireMessage(message);
      const content = checked.content;
      const blocks: unknown[] = typeof content === "string" ? (content === "" ? [] : [{ type: "text", text: content }]) : Array.isArray(content) ? [...content] : [];
      for (let i = blocks.length - 1; i >= 0; i--) {
        const block = blocks[i];
        if (!isBlock(block) || block["type"] === "thinking" || block["type"] === "redacted_thinking") continue;
        blocks[i] = { ...block, cache_control: { type: "ephemeral" } };
        return withContent(checked, blocks);
      }
      return checked;
    },
  };
}
