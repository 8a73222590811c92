/**
 * A `response_format` (chat's, or the Responses API's `text.format` translated to it) that asks
 * for one JSON document: `json_schema` or `json_object`, not `text`. Both server-side loops then
 * answer with the last turn's text alone, since text said before a tool call would break the
 * document for every client that parses it.
 */
export function asksForOneDocument(format: unknown): boolean {
  if (typeof format !== 'object' || format === null) return false;
  const type = (format as { type?: unknown }).type;
  return type === 'json_schema' || type === 'json_object';
}
