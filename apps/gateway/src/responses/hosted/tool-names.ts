/** The function names the model sees for the hosted tools. */
export const HOSTED_FUNCTION = {
  web_search: 'web_search',
  web_fetch: 'web_fetch',
  tool_search: 'tool_search',
  datetime: 'datetime',
} as const;
export type HostedKind = keyof typeof HOSTED_FUNCTION;
