import { convertToOpenAITool } from "@langchain/core/utils/function_calling";

/** What one model call carries besides the messages: the system prompt and the tool definitions. */
export function overheadText(request: { systemPrompt?: unknown; systemMessage?: unknown; tools?: readonly unknown[] }): string {
  const pieces: string[] = [];
  const system = request.systemMessage as { text?: unknown } | undefined;
  if (system !== undefined && typeof system.text === "string") pieces.push(system.text);
  else if (typeof request.systemPrompt === "string") pieces.push(request.systemPrompt);
  for (const tool of request.tools ?? []) {
    try {
      pieces.push(JSON.stringify(convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0])));
    } catch {
      pieces.push(JSON.stringify(tool) ?? "");
    }
  }
  return pieces.join("\n");
}
