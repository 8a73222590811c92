/**
 * Which requests need an API key: every /v1 and /api route, except the few that are public by
 * design. Decided by path here, in one place, so a new controller is protected without opting in.
 */
const PUBLIC: readonly { method: string; path: string }[] = [
  { method: 'GET', path: '/api/billing/plans' }, // the published plan figures (spec 01)
  { method: 'HEAD', path: '/api/billing/plans' },
];

/** Public by prefix: the console's static files (issue 23); it calls the API with the user's own key. */
const PUBLIC_PREFIXES: readonly { method: string; prefix: string }[] = [
  { method: 'GET', prefix: '/console' },
  { method: 'HEAD', prefix: '/console' },
];

export function needsApiKey(method: string, url: string): boolean {
  const path = url.split('?', 1)[0]!.replace(/\/+$/, '') || '/';
  if (PUBLIC_PREFIXES.some((p) => p.method === method && (path === p.prefix || path.startsWith(`${p.prefix}/`)))) return false;
  if (!(path === '/v1' || path.startsWith('/v1/') || path === '/api' || path.startsWith('/api/'))) return false;
  return !PUBLIC.some((p) => p.method === method && p.path === path);
}
