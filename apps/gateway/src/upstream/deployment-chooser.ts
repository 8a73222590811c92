import type { RoutingStrategy } from '../models/model-routes.config.js';
import type { Deployment } from './deployment.js';

/**
 * Picks the deployment for the next attempt of a request (README "Model routing"):
 * - deployments already tried by this request, cooling ones and ones at their rpm/tpm limit are out;
 * - of the rest, only the lowest priority group number is considered (group 0 first);
 * - within it, `weighted` draws by weight; `least_busy` takes the one with the fewest requests
 *   of this replica in flight, drawing by weight among ties;
 * - when nothing is left but cooling deployments, the one whose cooldown ends first is probed
 *   (failing open: an alias whose every upstream is cooling still gets tried, as a single
 *   upstream always was);
 * - a deployment at its limit is never chosen: undefined then (the caller answers 429).
 *
 * Loops over the (small) list without allocating: it runs on every proxied request.
 */
export function chooseDeployment(
  deployments: readonly Deployment[],
  tried: readonly Deployment[] | undefined,
  strategy: RoutingStrategy,
  now: number,
  random: () => number = Math.random,
): Deployment | undefined {
  if (deployments.length === 1 && tried === undefined) {
    const only = deployments[0]!;
    return only.atLimit(now) ? undefined : only;
  }
  let best = Infinity;
  let coolest: Deployment | undefined;
  for (const d of deployments) {
    if (tried?.includes(d)) continue;
    if (d.isCooling(now)) {
      if (!d.atLimit(now) && (coolest === undefined || d.cooldown!.until < coolest.cooldown!.until)) coolest = d;
      continue;
    }
    if (d.config.priority < best && !d.atLimit(now)) best = d.config.priority;
  }
  if (best === Infinity) return coolest;

  const eligible = (d: Deployment) => d.config.priority === best && !tried?.includes(d) && !d.isCooling(now) && !d.atLimit(now);
  let fewest = Infinity;
  if (strategy === 'least_busy') for (const d of deployments) if (d.inFlight < fewest && eligible(d)) fewest = d.inFlight;
  const inDraw = strategy === 'least_busy' ? (d: Deployment) => d.inFlight === fewest && eligible(d) : eligible;
  let total = 0;
  let last: Deployment | undefined;
  for (const d of deployments) {
    if (!inDraw(d)) continue;
    total += d.config.weight;
    last = d;
  }
  let r = random() * total;
  for (const d of deployments) {
    if (!inDraw(d)) continue;
    r -= d.config.weight;
    if (r < 0) return d;
  }
  return last;
}

/** When the soonest of the given deployments has room under its limits again (a 429's Retry-After). */
export function msUntilRoom(deployments: readonly Deployment[], now: number): number {
  let soonest = Infinity;
  for (const d of deployments) if (d.atLimit(now)) soonest = Math.min(soonest, d.msUntilRoom(now));
  return soonest === Infinity ? 1000 : soonest;
}
