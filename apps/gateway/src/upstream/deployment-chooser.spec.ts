import { seededRandom } from '@drael/test-support';
import { describe, expect, it } from 'vitest';
import type { DeploymentConfig } from '../models/model-routes.config.js';
import { chooseDeployment, msUntilRoom } from './deployment-chooser.js';
import { Deployment } from './deployment.js';

const NOW = 1_800_000_000_000;

function deployment(name: string, over: Partial<DeploymentConfig> = {}): Deployment {
  return new Deployment({ name, alias: 'a', base_url: 'http://x/v1', api_key: '', model: 'm', weight: 1, priority: 0, input_per_1m: 0, output_per_1m: 0, ...over });
}

describe('chooseDeployment', () => {
  it('honours weights within ±5 percentage points over 1,000 picks (weights 1:3:6 → 10%/30%/60%)', () => {
    const ds = [deployment('a', { weight: 1 }), deployment('b', { weight: 3 }), deployment('c', { weight: 6 })];
    const counts = new Map<string, number>();
    const random = seededRandom(24);
    for (let i = 0; i < 1000; i++) {
      const d = chooseDeployment(ds, undefined, 'weighted', NOW, random)!;
      counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
    }
    expect(Math.abs((counts.get('a') ?? 0) / 1000 - 0.1)).toBeLessThanOrEqual(0.05);
    expect(Math.abs((counts.get('b') ?? 0) / 1000 - 0.3)).toBeLessThanOrEqual(0.05);
    expect(Math.abs((counts.get('c') ?? 0) / 1000 - 0.6)).toBeLessThanOrEqual(0.05);
  });

  it('stays in the lowest priority group while it has a healthy deployment, then moves to the next', () => {
    const a = deployment('a', { priority: 0 });
    const b = deployment('b', { priority: 0 });
    const c = deployment('c', { priority: 1, weight: 100 });
    const ds = [a, b, c];
    for (let i = 0; i < 50; i++) expect(['a', 'b']).toContain(chooseDeployment(ds, undefined, 'weighted', NOW)!.name);
    // a tried by this request, b cooling: group 0 is out, group 1 takes over.
    b.cooldown = { until: NOW + 10_000, reason: 'server_error' };
    expect(chooseDeployment(ds, [a], 'weighted', NOW)).toBe(c);
    // Once the cooldown is over, b is probed again (eligible like any other).
    expect(chooseDeployment(ds, [a], 'weighted', NOW + 10_000)).toBe(b);
  });

  it('probes the cooling deployment whose cooldown ends first when nothing else is left (fails open)', () => {
    const a = deployment('a');
    const b = deployment('b');
    a.cooldown = { until: NOW + 5_000, reason: 'timeout' };
    b.cooldown = { until: NOW + 1_000, reason: 'timeout' };
    expect(chooseDeployment([a, b], undefined, 'weighted', NOW)).toBe(b);
    expect(chooseDeployment([a, b], [b], 'weighted', NOW)).toBe(a);
    expect(chooseDeployment([a, b], [a, b], 'weighted', NOW)).toBeUndefined();
  });

  it('skips a deployment at its rpm limit, never returns one, and says when room appears', () => {
    const limited = deployment('limited', { rpm: 2 });
    const other = deployment('other', { priority: 1 });
    limited.requests!.add(2, NOW - 30_000);
    expect(chooseDeployment([limited, other], undefined, 'weighted', NOW)).toBe(other);
    expect(chooseDeployment([limited], undefined, 'weighted', NOW)).toBeUndefined();
    expect(msUntilRoom([limited], NOW)).toBeGreaterThan(29_000);
    expect(msUntilRoom([limited], NOW)).toBeLessThanOrEqual(31_000);
    // A minute later the window has room again.
    expect(chooseDeployment([limited], undefined, 'weighted', NOW + 31_000)).toBe(limited);
  });

  it('skips a deployment at its tpm limit', () => {
    const full = deployment('full', { tpm: 1000 });
    const other = deployment('other', { priority: 3 });
    full.tokens!.add(1000, NOW);
    expect(chooseDeployment([full, other], undefined, 'weighted', NOW)).toBe(other);
  });

  it('least_busy takes the deployment with the fewest requests in flight', () => {
    const a = deployment('a', { weight: 100 });
    const b = deployment('b');
    a.inFlight = 3;
    b.inFlight = 1;
    for (let i = 0; i < 20; i++) expect(chooseDeployment([a, b], undefined, 'least_busy', NOW)).toBe(b);
    b.inFlight = 3;
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(chooseDeployment([a, b], undefined, 'least_busy', NOW)!.name);
    expect(seen).toContain('a');
  });
});
