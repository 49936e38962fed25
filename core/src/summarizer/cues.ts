/**
 * The word cues the extractive summarizer reads sentences by. Compiled once; none of them can
 * backtrack badly (no nested quantifiers).
 */

const APOS = "['’]";

/** A user sentence that states a constraint or preference. */
export const CONSTRAINT_CUE = new RegExp(
  String.raw`\b(?:must|never|don${APOS}t|do not|always|only|prefers?|preferred|avoid|without|should not|shouldn${APOS}t|make sure|ensure|no need to|not allowed)\b`,
  "i",
);

/** A sentence that records a decision or its rationale. */
export const DECISION_CUE = new RegExp(
  String.raw`\b(?:decided|decide to|decision|we${APOS}ll use|we will use|I${APOS}ll use|let${APOS}s use|let${APOS}s go with|going with|go with|instead of|rather than|because|chose|choose to|opted|settled on|switch(?:ed)? to)\b`,
  "i",
);

/** A sentence of the last assistant reply that points at what comes next. */
export const NEXT_STEP_CUE = new RegExp(
  String.raw`\b(?:next|then|todo|to-do|will|(?:I|we|you)${APOS}ll|need to|remaining|follow[- ]up)\b`,
  "i",
);

/**
 * Lead-in words of an assistant's statement of intent ("Now let me ", "I'll "); stripping them
 * turns "Let me read the config" into "Read the config".
 */
export const INTENT_LEAD_IN = new RegExp(
  String.raw`^(?:(?:now|next|first|then|ok(?:ay)?|alright|great|good|perfect),?\s+)*(?:let me|let${APOS}s|I${APOS}ll|I will|I am going to|I${APOS}m going to|I need to|we need to|we${APOS}ll|going to)\s+`,
  "i",
);

/** A sentence with nothing to keep ("Perfect!", "Got it.", "Now"). */
export const FILLER_SENTENCE =
  /^(?:perfect|great|good|excellent|nice|ok(?:ay)?|sure|right|alright|got it|done|yes|no|hmm+|ah|oh|interesting|understood|i see|thanks|thank you|absolutely|exactly|of course|certainly|now|wait|hold on|ah,? i see)\b[\s,.!:;-]*$/i;

/** A user message that is a bare slash command to the agent (`/model`, `/compact focus`). */
export const SLASH_COMMAND = /^\/[A-Za-z][\w:-]*(?:\s|$)/;

/** Trailing punctuation dropped from progress items. */
export const TRAILING_PUNCTUATION = /[\s.:;,!]+$/;

/** "I don't think", "don't know": a negation that states no constraint. */
export const NOT_A_CONSTRAINT = new RegExp(
  String.raw`\b(?:I|you|we)\s+(?:do not|don${APOS}t)\s+(?:think|tink|know|understand|see|get|remember|care|mind)\b`,
  "i",
);

/** A line of tool output that names the failure ("error TS2739", "No such file", "exited with code 1"). */
export const ERROR_LINE =
  /\b(?:error|errors|failed|failure|exception|fatal|panic|not found|no such file|denied|exited with code|cannot|can't|unable to)\b/i;
