/** Options of the summarizer-extractive plugin, as a draft-07 JSON Schema and a type. */

/**
 * JSON Schema (draft-07) of the plugin's options. A plain JSON literal: the core's config schema
 * carries a copy of it.
 */
export const SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA = {
  title: "summarizer-extractive options",
  description:
    "Summarises without a model, network or API key: a structured markdown summary (goal, constraints, progress, decisions, files, commands, identifiers, next steps) built from the messages alone. It is the summarizer only where no other is installed: a model summarizer plugin replaces it.",
  type: "object",
  additionalProperties: false,
  properties: {
    maxItemsPerSection: {
      type: "integer",
      minimum: 1,
      default: 20,
      description: "Most items per section (goal, constraints, progress, decisions, commands, failures, next steps).",
    },
    maxFilesPerList: {
      type: "integer",
      minimum: 1,
      default: 50,
      description: "Most paths in each of Files/Read and Files/Modified.",
    },
    maxIdentifiers: {
      type: "integer",
      minimum: 0,
      default: 64,
      description: "Most entries under Identifiers (names, paths, the names declared in the code being changed). `0` leaves the section out.",
    },
    maxItemChars: {
      type: "integer",
      minimum: 40,
      default: 300,
      description: "Longest item in characters; longer ones are cut with '…'. At least 40, so clipped items can still be matched when an earlier summary is merged.",
    },
  },
};

/** The plugin's options after validation, defaults filled in. */
export interface SummarizerExtractiveOptions {
  /** Most items per section. Default 20. */
  readonly maxItemsPerSection: number;
  /** Most paths per file list. Default 50. */
  readonly maxFilesPerList: number;
  /** Most entries under Identifiers. Default 64. */
  readonly maxIdentifiers: number;
  /** Longest item in characters. Default 300. */
  readonly maxItemChars: number;
}
