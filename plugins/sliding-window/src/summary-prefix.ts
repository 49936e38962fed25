/**
 * The sliding window's summary begins with a prefix (`Previously:` by default). A one-line
 * summary follows the prefix after a space; a longer one (the extractive summarizer's markdown
 * sections) starts on its own paragraph so its headings stay headings.
 */
export function withSummaryPrefix(summary: string, prefix: string): string {
  const body = summary.trim();
  if (body === "") return "";
  return body.includes("\n") ? `${prefix}\n\n${body}` : `${prefix} ${body}`;
}

/**
 * The summary without the prefix, so an updated summary does not carry the old prefix into the
 * new one. Text that does not begin with the prefix is returned as it is.
 */
export function withoutSummaryPrefix(text: string, prefix: string): string {
  if (!text.startsWith(prefix)) return text;
  return text.slice(prefix.length).replace(/^\s+/, "");
}
