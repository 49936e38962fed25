/**
 * Readers for the parts of OpenAI Responses items that more than one reader needs: the
 * Responses adapter (items as an agent holds them) and the Codex importer of
 * @compaction/transcript (Codex rollouts store the same items). Pure, and never throwing on
 * shapes they do not know.
 */
import { type Fields, isFields } from "./message-fields.js";

/** Content part types that carry text, and the property that holds it. */
const TEXT_PARTS: Readonly<Record<string, string>> = Object.freeze({
  input_text: "text",
  output_text: "text",
  text: "text",
  refusal: "refusal",
  summary_text: "text",
  reasoning_text: "text",
});

/** Content part types that are images. */
const IMAGE_PARTS = new Set(["input_image", "image_url", "image"]);

export interface ResponsesContentReading {
  /** The text of each text, output text and refusal part, in order. */
  readonly texts: readonly string[];
  readonly imageCount: number;
}

/** A message's or an output's content: a string, or a list of `input_text` / `output_text` / `refusal` / `input_image` / `input_file` parts. */
export function readResponsesContent(content: unknown): ResponsesContentReading {
  if (typeof content === "string") return { texts: [content], imageCount: 0 };
  if (!Array.isArray(content)) return { texts: [], imageCount: 0 };
  const texts: string[] = [];
  let imageCount = 0;
  for (const part of content as unknown[]) {
    if (!isFields(part) || typeof part["type"] !== "string") continue;
    const key = TEXT_PARTS[part["type"]];
    if (key !== undefined && typeof part[key] === "string") texts.push(part[key]);
    else if (IMAGE_PARTS.has(part["type"])) imageCount += 1;
  }
  return { texts, imageCount };
}

/**
 * Content with the text of each text part (or the string itself) replaced by `rewrite(text)`;
 * images, files and unknown parts are kept as they are.
 */
export function mapResponsesContent(content: unknown, rewrite: (text: string) => string): unknown {
  if (typeof content === "string") return rewrite(content);
  if (!Array.isArray(content)) return content;
  return (content as unknown[]).map((part) => {
    if (!isFields(part) || typeof part["type"] !== "string") return part;
    const key = TEXT_PARTS[part["type"]];
    if (key === undefined || typeof part[key] !== "string") return part;
    return { ...part, [key]: rewrite(part[key]) };
  });
}

/** The lists of a `reasoning` item that hold its readable text: the API's `summary` and `content`, the Agents SDK's `rawContent`. */
const REASONING_TEXT_KEYS = ["summary", "content", "rawContent"] as const;

/** A `reasoning` item's readable text: its `summary` parts, then its `content` parts (encrypted content is not readable). */
export function responsesReasoningTexts(item: Fields): string[] {
  const texts: string[] = [];
  for (const key of REASONING_TEXT_KEYS) {
    const list = item[key];
    if (!Array.isArray(list)) continue;
    for (const part of list) if (isFields(part) && typeof part["text"] === "string" && part["text"] !== "") texts.push(part["text"]);
  }
  return texts;
}

/**
 * A copy of a `reasoning` item with the lists `responsesReasoningTexts` reads emptied (each kept
 * as an empty list: the API's `summary` is required, the Agents SDK's `content` too); its id and
 * encrypted content are kept. The item itself when it has no readable text.
 */
export function withoutReasoningTexts(item: Fields): Fields {
  if (responsesReasoningTexts(item).length === 0) return item;
  const copy: Record<string, unknown> = { ...item };
  for (const key of REASONING_TEXT_KEYS) if (Array.isArray(item[key])) copy[key] = [];
  return copy;
}

export interface ResponsesOutputReading {
  readonly text: string;
  readonly isError: boolean;
  readonly imageCount: number;
}

/**
 * A tool output's text and whether it failed. `output` is a string (shell tools put
 * `{"output", "metadata": {"exit_code"}}` JSON in it: a non-zero exit code is a failure), a list
 * of content parts, or in some versions `{ content, success }`. With `imagePlaceholder`, each
 * image part of a list adds that text (the Codex importer writes `[image]`).
 */
export function readResponsesOutput(output: unknown, options: { readonly imagePlaceholder?: string } = {}): ResponsesOutputReading {
  if (Array.isArray(output)) {
    const pieces: string[] = [];
    let imageCount = 0;
    for (const part of output as unknown[]) {
      const reading = readResponsesContent([part]);
      pieces.push(...reading.texts);
      imageCount += reading.imageCount;
      if (reading.imageCount > 0 && options.imagePlaceholder !== undefined) pieces.push(options.imagePlaceholder);
    }
    return { text: pieces.join("\n"), isError: false, imageCount };
  }
  if (isFields(output)) {
    // A computer tool's screenshot is an image; the Agents SDK's `{ type: "text", text }` is text;
    // `{ content, success }` is text and its outcome.
    if (typeof output["type"] === "string" && (IMAGE_PARTS.has(output["type"]) || output["type"] === "computer_screenshot")) {
      return { text: "", isError: false, imageCount: 1 };
    }
    if (output["type"] === "text" && typeof output["text"] === "string") return { text: output["text"], isError: false, imageCount: 0 };
    return {
      text: typeof output["content"] === "string" ? output["content"] : JSON.stringify(output),
      isError: output["success"] === false,
      imageCount: 0,
    };
  }
  const text = typeof output === "string" ? output : JSON.stringify(output ?? "");
  return { text, isError: exitCodeFailed(text), imageCount: 0 };
}

/** True for shell output JSON (`{"output", "metadata": {"exit_code"}}`) with a non-zero exit code. */
function exitCodeFailed(text: string): boolean {
  const exitCode = parseShellOutput(text)?.exitCode;
  return typeof exitCode === "number" && exitCode !== 0;
}

export interface ShellOutput {
  /** The parsed JSON object, to write back with a new `output`. */
  readonly fields: Fields;
  readonly output: string;
  readonly exitCode: number | undefined;
}

/** A shell tool's output as Codex writes it: a JSON string `{"output": "...", "metadata": {"exit_code": n}}`; undefined for anything else. */
export function parseShellOutput(text: string): ShellOutput | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!isFields(parsed) || typeof parsed["output"] !== "string" || !isFields(parsed["metadata"])) return undefined;
    const exitCode = parsed["metadata"]["exit_code"];
    return { fields: parsed, output: parsed["output"], exitCode: typeof exitCode === "number" ? exitCode : undefined };
  } catch {
    return undefined;
  }
}
