/**
 * The word cues the extractive summarizer reads sentences by. Compiled once; none of them can
 * backtrack badly (no nested quantifiers).
 */

const APOS = "['’]";

/** Openers that react rather than inform. */
const REACTIONS = String.raw`good|great|perfect|excellent|nice|ok(?:ay)?|alright|sure|hmm+|wait|ah|oh|actually|got it|looks good|you${APOS}re (?:absolutely |totally |quite )?right|that${APOS}s (?:much |a lot |way )?(?:better|it|right|correct)|understood|thanks|thank you`;

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

/**
 * An item that opens with chatter rather than a fact: "Now update the call site", "Good, those
 * are all relative imports", "You're absolutely right", "That's much better", "Revert first".
 * Such sentences narrate the work; what the work did is read from the tool calls instead.
 */
export const CHATTER_OPENER = new RegExp(
  String.raw`^(?:now|done|see how|revert|let me|let${APOS}s|I${APOS}ll|I will|I${APOS}m going to|${REACTIONS})\b`,
  "i",
);

/** A sentence that opens with a reaction to what was said or seen ("Good,", "You're absolutely right"). */
export const REACTION_OPENER = new RegExp(String.raw`^(?:${REACTIONS})\b`, "i");

/** An assistant sentence stating that something is finished ("WP15 complete.", "All checks pass."). */
export const COMPLETION_CUE =
  /\b(?:(?:is|are) (?:now )?(?:complete|done|finished|working|passing)|completed?|all (?:checks|tests) pass(?:es|ed)?|(?:checks|tests) (?:now )?pass)\b|^(?:fixed|added|implemented|created|updated|removed|renamed|moved|refactored|replaced|extracted|resolved|ported)\s/i;

/** A user sentence or message that is an error someone pasted, not a rule ("Error: 400 ...", JSON). */
export const PASTED_ERROR =
  /^(?:[\w.]*(?:error|exception)\b|fatal\b|panic\b|traceback\b|api error|request failed|\d{3}\s+(?:bad request|unauthorized|forbidden|not found|internal server error|too many requests|service unavailable|overloaded)\b|\{\s*"(?:type|error)"\s*:)/i;

/** A shell command that checks the work (build, test, lint, typecheck): listed under commands, not as done work. */
export const CHECKING_COMMAND =
  /(?:^|[\s;&|])(?:npm|pnpm|yarn|bun|npx|make|cargo|go|tsc|tsgo|vitest|jest|pytest|ruff|eslint|biome|mypy|gradle|mvn|dotnet)\b[^;&|]*?\b(?:test|tests|check|lint|build|typecheck|tsc|vet|noEmit|ci)\b/;

/** A short reply that approves or continues and asks for nothing new ("yes", "go ahead", "continue"). */
export const APPROVAL =
  /^(?:y(?:es|ep|eah)?|ok(?:ay)?|sure|go(?: ahead| on)?|continue|proceed|do it|sounds good|lgtm|please do|perfect|great|thanks?|thank you)\b[\s\w,.!]{0,20}$/i;

/**
 * A shell command that only looks (lists, reads, searches, shows status): its run says nothing
 * about the state of the work, so the summary does not list it.
 */
export const LOOKING_COMMAND =
  /^(?:cd\s+\S+\s*(?:&&|;)\s*)*(?:ls|ll|cat|head|tail|less|grep|rg|ag|find|fd|wc|pwd|echo|printf|tree|stat|file|which|type|du|df|sed\s+-n|awk|sort|uniq|diff|git\s+(?:status|log|diff|show|branch|remote|blame|grep|ls-files|rev-parse))\b/;

/** A `git commit` with its message: progress worth naming. */
export const GIT_COMMIT_MESSAGE = /\bgit\s+(?:[\w-]+\s+)*commit\b[^"']*?-m\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')/;
