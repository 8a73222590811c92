/**
 * Which requests need an API key: every /v1 and /api route, except the few that are public by
 * design. Decided by path here, in one place, so a new controller is protected without opting in.
 */
const PUBLIC: readonly { method: string; path: string }[] = [
  { method: 'GET', path: '/api/billing/plans' }, // the published plan figures (spec 01)
  { method: 'HEAD', path: '/api/billing/plans' },
];

export function needsApiKey(method: string, url: string): boolean {
  const path = url.split('?', 1)[0]!.replace(/\/+$/, '') || '/';
  if (!(path === '/v1' || path.startsWith('/v1/') || path === '/api' || path.startsWith('/api/'))) return false;
  return !PUBLIC.some((p) => p.method === method && p.path === path);
}
