/**
 * Names the agent declared in the code it wrote: the functions, methods, classes and types of an
 * edit's new text or a written file. The agent goes on to use them (it calls the method it just
 * added, fixes the type it changed), and nothing else in a summary names them: plain words in
 * prose, they are not identifiers by the core's rule unless someone wrote them in backticks.
 * Functions and methods are written `name()`, as people write them; types and classes as they are.
 */

/** Argument keys that hold the new text of an edit or a written file, across the common tools. */
const NEW_TEXT_KEYS = new Set(["newText", "new_text", "new_string", "newString", "new_str", "content", "file_text", "text"]);
const DECLARATION = /\b(?:function\*?|class|interface|type|enum|struct|trait|def|fn)\s+([A-Za-z_$][\w$]*)/g;
/** A method or function head at a line's start: modifiers, a name, a parameter list, then a body or a return type. */
const METHOD = /^[ \t]*(?:(?:export|public|private|protected|static|async|override|readonly|get|set|pub|default)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>\n]*>)?\([^)\n]*\)\s*(?::[^{\n]*)?\{/gm;
const ARROW = /\b(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)\n]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=\n]*)?=>/g;
const KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "function", "return", "constructor", "super", "with", "else", "do", "try"]);

/** New text in a tool call's arguments (nested `edits` arrays too). */
function newTexts(value: unknown, key: string | undefined, out: string[]): void {
  if (typeof value === "string") {
    if (key !== undefined && NEW_TEXT_KEYS.has(key)) out.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) newTexts(item, key, out);
    return;
  }
  if (typeof value === "object" && value !== null) {
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) newTexts(item, name, out);
  }
}

/** The names declared in the code of a modifying tool call's arguments, in order, each once. */
export function declaredNames(args: unknown): string[] {
  const texts: string[] = [];
  newTexts(args, undefined, texts);
  const names = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(DECLARATION)) if (match[1] !== undefined && match[1].length >= 3) names.add(match[1]);
    for (const pattern of [METHOD, ARROW]) {
      for (const match of text.matchAll(pattern)) {
        const name = match[1];
        if (name !== undefined && name.length >= 3 && !KEYWORDS.has(name)) names.add(`${name}()`);
      }
    }
  }
  return [...names];
}
