/**
 * Summary-only mode, for users who keep OpenClaw's own compaction (its cut, its transcript
 * entry): a compaction provider OpenClaw calls instead of its built-in summarizer when
 * `agents.defaults.compaction.provider` is `compaction`. It writes the summary with the
 * summarizer the agent's `.compactionrc` names (the extractive one, or summarizer-openai /
 * summarizer-anthropic), updating the previous summary rather than summarizing it again.
 */
import { type Compactor, type MessageFacts, type PiMessage } from "@compaction/core";
import type { CompactionProvider } from "./openclaw-api.js";

export const PROVIDER_ID = "compaction";

export function compactionProvider(compactorFor: () => Promise<Compactor<PiMessage>>): CompactionProvider {
  return {
    id: PROVIDER_ID,
    label: "Compaction (.compactionrc summarizer)",
    async summarize(params) {
      const compactor = await compactorFor();
      const facts: MessageFacts[] = [];
      let input = 0;
      for (const message of params.messages) {
        try {
          facts.push(compactor.facts.of(message as PiMessage));
          input += compactor.tokens.count(message as PiMessage);
        } catch {
          // OpenClaw hands over its own entries too (e.g. bookkeeping without a role); they hold nothing to summarize.
        }
      }
      const ratio = params.compressionRatio;
      const maxTokens = ratio !== undefined && ratio > 0 && ratio < 1 && input > 0 ? Math.max(64, Math.min(compactor.summaryMaxTokens, Math.floor(input * ratio))) : compactor.summaryMaxTokens;
      const focus = params.customInstructions?.trim();
      const previous = params.previousSummary?.trim();
      return compactor.summarizer.summarize({
        messages: facts,
        maxTokens,
        counter: compactor.tokens.counter,
        kind: "history",
        ...(previous ? { previousSummary: previous } : {}),
        ...(focus ? { focus } : {}),
        ...(params.signal === undefined ? {} : { signal: params.signal }),
      });
    },
  };
}
